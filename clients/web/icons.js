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

const icon = (body) => `<svg ${SVG} viewBox="0 0 16 16" class="icon">${body}</svg>`;
const stroke = 'fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" stroke-linejoin="round"';

export const hintIcon = icon(`<path d="M5.2 9.6A4.2 4.2 0 1 1 10.8 9.6c-.7.6-1 1.2-1 1.9H6.2c0-.7-.3-1.3-1-1.9z" ${stroke}/><path d="M6.4 13.6h3.2" ${stroke}/>`);
export const pauseIcon = icon('<path d="M4 2.5h2.6v11H4zm5.4 0H12v11H9.4z" fill="currentColor"/>');
export const playIcon = icon('<path d="M4.5 2.4v11.2L13.2 8z" fill="currentColor"/>');
export const stepBackIcon = icon('<path d="M3 2.8v10.4" stroke="currentColor" stroke-width="1.8"/><path d="M13 2.6v10.8L5 8z" fill="currentColor"/>');
export const stepForwardIcon = icon('<path d="M13 2.8v10.4" stroke="currentColor" stroke-width="1.8"/><path d="M3 2.6v10.8L11 8z" fill="currentColor"/>');
export const toStartIcon = icon('<path d="M2.6 2.8v10.4" stroke="currentColor" stroke-width="1.8"/><path d="M9 2.8v10.4L3.8 8zm5.4 0v10.4L9.2 8z" fill="currentColor"/>');
export const toEndIcon = icon('<path d="M13.4 2.8v10.4" stroke="currentColor" stroke-width="1.8"/><path d="M7 2.8v10.4L12.2 8zM1.6 2.8v10.4L6.8 8z" fill="currentColor"/>');
export const trophyIcon = icon(`<path d="M4.5 2h7v3.5a3.5 3.5 0 0 1-7 0zM4.5 3.2H2.2v1a2.6 2.6 0 0 0 2.5 2.6m6.8-3.6h2.3v1a2.6 2.6 0 0 1-2.5 2.6M8 9v2.6m-2.6 2.2h5.2l-.6-2.2H6z" ${stroke}/>`);
export const calendarIcon = icon(`<rect x="2.2" y="3" width="11.6" height="10.8" rx="1.6" ${stroke}/><path d="M2.2 6.4h11.6M5.2 1.6v2.8m5.6-2.8v2.8" ${stroke}/><path d="M5 8.6h2v2H5z" fill="currentColor"/>`);
export const replayIcon = icon(`<path d="M2.8 8a5.2 5.2 0 1 0 1.6-3.8" ${stroke}/><path d="M2.4 2.2v3.2h3.2" ${stroke}/><path d="M6.7 5.7v4.6L10.4 8z" fill="currentColor"/>`);

export const personIcon = `<svg ${SVG} viewBox="0 0 16 16" class="icon"><circle cx="8" cy="5" r="3" fill="none" stroke="currentColor" stroke-width="1.5"/><path d="M2.5 14.5q.6-5 5.5-5t5.5 5" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round"/></svg>`;
