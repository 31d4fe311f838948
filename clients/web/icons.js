// Inline SVG pictures: the face and the small icons of the controls.

const SVG = 'xmlns="http://www.w3.org/2000/svg" aria-hidden="true" focusable="false"';

const head = '<circle cx="12" cy="12" r="10.2" fill="#ffd400" stroke="#000" stroke-width="1.3"/>';
const eyes = '<circle cx="8.6" cy="9.4" r="1.35"/><circle cx="15.4" cy="9.4" r="1.35"/>';

const FACES = {
  smile: `${head}${eyes}<path d="M7.4 14.2q4.6 4.6 9.2 0" fill="none" stroke="#000" stroke-width="1.4" stroke-linecap="round"/>`,
  oh: `${head}<circle cx="8.6" cy="8.9" r="1.6"/><circle cx="15.4" cy="8.9" r="1.6"/><ellipse cx="12" cy="15.4" rx="2.1" ry="2.6" fill="none" stroke="#000" stroke-width="1.4"/>`,
  win: `${head}<path d="M4.4 8.2h15.2M5.6 8.2l.7 3.4h4.2l.8-3.4m1.4 0 .8 3.4h4.2l.7-3.4" stroke="#000" stroke-width="1.3" stroke-linejoin="round"/><path d="M6 8.4h4.8l-.6 2.9H6.6zm7.2 0H18l-.6 2.9h-3.6z"/><path d="M7.6 14.6q4.4 4.2 8.8 0" fill="none" stroke="#000" stroke-width="1.4" stroke-linecap="round"/>`,
  dead: `${head}<path d="m7.2 7.6 2.8 2.8m0-2.8-2.8 2.8m6.8-2.8 2.8 2.8m0-2.8-2.8 2.8" stroke="#000" stroke-width="1.4" stroke-linecap="round"/><path d="M8 17.2q4-3.6 8 0" fill="none" stroke="#000" stroke-width="1.4" stroke-linecap="round"/>`,
};

export function faceSvg(kind) {
  return `<svg ${SVG} viewBox="0 0 24 24">${FACES[kind] || FACES.smile}</svg>`;
}

export const flagIcon = `<svg ${SVG} viewBox="0 0 16 16" class="icon"><path d="M8.5 2.4v9.2" stroke="currentColor" stroke-width="1.5"/><path d="M8.6 2 2.8 5.1l5.8 3z" fill="#d41b16"/><path d="M4.6 13h7.8v1.6H4.6zM6 11.4h5V13H6z" fill="currentColor"/></svg>`;

export const linkIcon = `<svg ${SVG} viewBox="0 0 16 16" class="icon"><path d="M6.6 9.4a3 3 0 0 0 4.2 0l2.4-2.4a3 3 0 0 0-4.2-4.2l-.9.9M9.4 6.6a3 3 0 0 0-4.2 0L2.8 9a3 3 0 0 0 4.2 4.2l.9-.9" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round"/></svg>`;
