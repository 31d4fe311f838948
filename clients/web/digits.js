// A seven-segment display, as on the classic counters, drawn in SVG: three digits, and
// more when the value needs them (a big board's mines, a long game's seconds). The
// element carries the value as text for assistive technology (aria-label) and for
// scripts (data-value).

const SEGMENTS = {
  a: "1.6,1 11.4,1 9.4,3 3.6,3",
  b: "12,1.6 12,11 10,9.6 10,3.6",
  c: "12,12 12,21.4 10,19.4 10,13.4",
  d: "1.6,22 3.6,20 9.4,20 11.4,22",
  e: "1,12 3,13.4 3,19.4 1,21.4",
  f: "1,1.6 3,3.6 3,9.6 1,11",
  g: "1.6,11.5 3.6,10.5 9.4,10.5 11.4,11.5 9.4,12.5 3.6,12.5",
};

const LIT = {
  0: "abcdef", 1: "bc", 2: "abged", 3: "abgcd", 4: "fgbc",
  5: "afgcd", 6: "afgedc", 7: "abc", 8: "abcdefg", 9: "abcdfg", "-": "g", " ": "",
};

const MIN_DIGITS = 3;

function digitGroup(n) {
  const polys = Object.entries(SEGMENTS)
    .map(([name, points]) => `<polygon data-seg="${name}" points="${points}"/>`)
    .join("");
  return `<g transform="translate(${n * 14 + 1} 1)">${polys}</g>`;
}

export class SevenSegment {
  constructor(el, label) {
    this.el = el;
    this.label = label;
    this.value = null;
    this.digits = 0;
    this.set(0);
  }

  /** Draw `count` digits (the display widens with them). */
  build(count) {
    const groups = Array.from({ length: count }, (_, n) => digitGroup(n)).join("");
    this.el.innerHTML = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${count * 14 + 1} 25" aria-hidden="true" focusable="false">${groups}</svg>`;
    this.el.style.setProperty("--digits", String(count));
    this.groups = [...this.el.querySelectorAll("g")];
    this.digits = count;
  }

  set(value) {
    const v = Math.trunc(value);
    if (v === this.value) return;
    this.value = v;
    const text = v < 0 ? "-" + String(-v).padStart(MIN_DIGITS - 1, "0") : String(v).padStart(MIN_DIGITS, "0");
    if (text.length !== this.digits) this.build(text.length);
    this.groups.forEach((g, n) => {
      const lit = LIT[text[n]] ?? "";
      for (const poly of g.children) poly.classList.toggle("on", lit.includes(poly.dataset.seg));
    });
    this.el.dataset.value = String(v);
    this.el.setAttribute("aria-label", this.label(v));
  }
}
