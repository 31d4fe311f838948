// How cells look on the board's canvas. Each look (hidden, flag, the numbers, a mine, …)
// is drawn once per cell size into a strip of sprites, then copied cell by cell; the marks
// over cells (a hint, a replay's last move) are drawn over them. Boards seen so small that
// a cell is a few pixels are drawn from a picture with one pixel per cell (BoardImage),
// one colour per look; the overview shows the same picture.

const GREY = "#c0c0c0";
const LIGHT = "#ffffff";
const DARK = "#7b7b7b";
const OPEN = "#d9d9d9";
const GRID_LINE = "#9b9b9b";
const EXPLODED = "#ff2a1a";
// Number colours, each at least 4.5:1 on the open-cell grey.
const NUMBER = ["", "#0000f0", "#006a00", "#c00000", "#000080", "#800000", "#006b6b", "#000000", "#505050"];

// The icons, on a 16 x 16 grid, drawn at 64% of a cell.
const FLAG_POLE = "M8.5 2.4v9.2";
const FLAG_CLOTH = "M8.6 2 2.8 5.1l5.8 3z";
const FLAG_BASE = "M4.6 13h7.8v1.6H4.6zM6 11.4h5V13H6z";
const MINE_SPIKES = "M8 1.5v13M1.5 8h13M3.4 3.4l9.2 9.2M12.6 3.4l-9.2 9.2";
const WRONG_CROSS = "M2 2l12 12M14 2 2 14";

const code = (ch) => ch.charCodeAt(0);

/** The sprite of each view character, by its code; "pressed" is an open cell without a number. */
export const SPRITES = ["#", "F", "?", "0", "1", "2", "3", "4", "5", "6", "7", "8", "*", "X", "!"];
export const PRESSED = SPRITES.length;
const SLOT = new Int8Array(128).fill(-1);
SPRITES.forEach((ch, k) => (SLOT[code(ch)] = k));

/** The sprite slot that shows view character `c` (a code); hidden for anything unknown. */
export function slotOf(c) {
  const k = c < 128 ? SLOT[c] : -1;
  return k < 0 ? 0 : k;
}

// One colour per look, for cells a few pixels wide: hidden cells stand out from open ones,
// marks and mines from both. As 0xAABBGGRR, the byte order of ImageData on every browser
// the page runs on (little-endian).
const PIXEL = new Uint32Array(128).fill(0xff9a9a9a);
function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return (0xff000000 | ((n & 0xff) << 16) | (n & 0xff00) | (n >> 16)) >>> 0;
}
PIXEL[code("#")] = rgb("#9a9a9a");
PIXEL[code("F")] = rgb("#d41b16");
PIXEL[code("?")] = rgb("#c9a400");
PIXEL[code("0")] = rgb("#e4e4e4");
["#c9c9f4", "#c3dcc3", "#f0c4c4", "#b9b9d6", "#d6b9b9", "#b9d6d6", "#a0a0a0", "#b0b0b0"].forEach(
  (hex, n) => (PIXEL[code(String(n + 1))] = rgb(hex)),
);
PIXEL[code("*")] = rgb("#202020");
PIXEL[code("X")] = rgb(EXPLODED);
PIXEL[code("!")] = rgb("#ff8c00");

/** A canvas that is not on the page (an OffscreenCanvas where the browser has one). */
export function scratchCanvas(width, height) {
  if (typeof OffscreenCanvas !== "undefined") return new OffscreenCanvas(width, height);
  const c = document.createElement("canvas");
  c.width = width;
  c.height = height;
  return c;
}

/** The board as a picture with one pixel per cell, kept up to date cell by cell. */
export class BoardImage {
  constructor(width, height) {
    this.width = width;
    this.height = height;
    this.canvas = scratchCanvas(width, height);
    this.ctx = this.canvas.getContext("2d");
    this.image = this.ctx.createImageData(width, height);
    this.pixels = new Uint32Array(this.image.data.buffer);
    this.dirty = null; // [x0, y0, x1, y1] not yet on the canvas
  }

  /** Every cell from `cells` (view character codes). */
  setAll(cells) {
    const px = this.pixels;
    for (let i = 0; i < cells.length; i++) px[i] = PIXEL[cells[i] & 127];
    this.dirty = [0, 0, this.width - 1, this.height - 1];
  }

  /** The cells at `indices` from `cells`. */
  set(indices, cells) {
    const n = indices.length;
    if (n === 0) return;
    if (n > cells.length / 8) {
      this.setAll(cells);
      return;
    }
    const px = this.pixels;
    let lo = Infinity;
    let hi = -1;
    for (let k = 0; k < n; k++) {
      const i = indices[k];
      px[i] = PIXEL[cells[i] & 127];
      if (i < lo) lo = i;
      if (i > hi) hi = i;
    }
    // The rows between the first and the last cell changed go to the canvas.
    const w = this.width;
    const rows = [Math.floor(lo / w), Math.floor(hi / w)];
    const d = this.dirty;
    this.dirty = d ? [0, Math.min(d[1], rows[0]), w - 1, Math.max(d[3], rows[1])] : [0, rows[0], w - 1, rows[1]];
  }

  /** The canvas, with every change on it. */
  flush() {
    const d = this.dirty;
    if (d) {
      this.ctx.putImageData(this.image, 0, 0, d[0], d[1], d[2] - d[0] + 1, d[3] - d[1] + 1);
      this.dirty = null;
    }
    return this.canvas;
  }
}

function icon(ctx, s, draw) {
  ctx.save();
  const k = (0.64 * s) / 16;
  ctx.translate((s - 16 * k) / 2, (s - 16 * k) / 2);
  ctx.scale(k, k);
  draw();
  ctx.restore();
}

function drawMine(ctx, s, { alpha = 1, highlight = true } = {}) {
  icon(ctx, s, () => {
    ctx.globalAlpha = alpha;
    ctx.strokeStyle = "#000";
    ctx.lineWidth = 1.4;
    ctx.lineCap = "round";
    ctx.stroke(new Path2D(MINE_SPIKES));
    ctx.fillStyle = "#000";
    ctx.beginPath();
    ctx.arc(8, 8, 4.6, 0, Math.PI * 2);
    ctx.fill();
    if (highlight) {
      ctx.fillStyle = "#fff";
      ctx.beginPath();
      ctx.arc(6.5, 6.5, 1.3, 0, Math.PI * 2);
      ctx.fill();
    }
  });
}

function drawHidden(ctx, s) {
  const b = Math.max(1, Math.round(s / 11));
  ctx.fillStyle = GREY;
  ctx.fillRect(0, 0, s, s);
  ctx.fillStyle = LIGHT;
  ctx.beginPath();
  ctx.moveTo(0, 0);
  ctx.lineTo(s, 0);
  ctx.lineTo(s - b, b);
  ctx.lineTo(b, b);
  ctx.lineTo(b, s - b);
  ctx.lineTo(0, s);
  ctx.fill();
  ctx.fillStyle = DARK;
  ctx.beginPath();
  ctx.moveTo(s, s);
  ctx.lineTo(0, s);
  ctx.lineTo(b, s - b);
  ctx.lineTo(s - b, s - b);
  ctx.lineTo(s - b, b);
  ctx.lineTo(s, 0);
  ctx.fill();
}

function drawOpen(ctx, s, fill = OPEN) {
  const line = Math.max(1, Math.round(s / 32));
  ctx.fillStyle = fill;
  ctx.fillRect(0, 0, s, s);
  ctx.fillStyle = GRID_LINE;
  ctx.fillRect(0, 0, s, line);
  ctx.fillRect(0, 0, line, s);
}

function drawText(ctx, s, text, colour) {
  ctx.fillStyle = colour;
  ctx.font = `800 ${Math.round(s * 0.62)}px "Arial Black", "Segoe UI", system-ui, sans-serif`;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, s / 2, s / 2 + s * 0.04);
}

function drawSprite(ctx, ch, s) {
  if (ch === "#" || ch === "F" || ch === "?") {
    drawHidden(ctx, s);
    if (ch === "F") {
      icon(ctx, s, () => {
        ctx.strokeStyle = "#000";
        ctx.lineWidth = 1.5;
        ctx.stroke(new Path2D(FLAG_POLE));
        ctx.fillStyle = "#d41b16";
        ctx.fill(new Path2D(FLAG_CLOTH));
        ctx.fillStyle = "#000";
        ctx.fill(new Path2D(FLAG_BASE));
      });
    } else if (ch === "?") {
      drawText(ctx, s, "?", "#000");
    }
    return;
  }
  drawOpen(ctx, s, ch === "X" ? EXPLODED : OPEN);
  if (ch >= "1" && ch <= "8") drawText(ctx, s, ch, NUMBER[Number(ch)]);
  else if (ch === "*" || ch === "X") drawMine(ctx, s);
  else if (ch === "!") {
    drawMine(ctx, s);
    icon(ctx, s, () => {
      ctx.strokeStyle = "#d41b16";
      ctx.lineWidth = 2;
      ctx.lineCap = "round";
      ctx.stroke(new Path2D(WRONG_CROSS));
    });
  }
}

/** The looks of every cell at one size (`s` device pixels), in one strip. */
export class Sprites {
  constructor(s) {
    this.s = s;
    this.canvas = scratchCanvas(s * (SPRITES.length + 1), s);
    const ctx = this.canvas.getContext("2d");
    SPRITES.forEach((ch, k) => {
      ctx.save();
      ctx.translate(k * s, 0);
      drawSprite(ctx, ch, s);
      ctx.restore();
    });
    ctx.save();
    ctx.translate(PRESSED * s, 0);
    drawOpen(ctx, s);
    ctx.restore();
  }

  /** Copy sprite `slot` to (dx, dy) on `ctx`. */
  draw(ctx, slot, dx, dy) {
    const s = this.s;
    ctx.drawImage(this.canvas, slot * s, 0, s, s, dx, dy, s, s);
  }
}

const RING = { safe: "#0a7d2c", mine: "#c62828", guess: "#b35c00" };

/**
 * Draw the marks named by `classes` (the board's mark classes: "hint hint-safe",
 * "hint-source", "replay-last", "fatal", "layout-mine") over the cell at (dx, dy) that
 * shows view character `ch`.
 */
export function drawMarks(ctx, classes, ch, dx, dy, s) {
  const unit = Math.max(1, s / 32);
  const ring = (colour, width, inset = 0) => {
    ctx.strokeStyle = colour;
    ctx.lineWidth = width;
    ctx.strokeRect(dx + inset + width / 2, dy + inset + width / 2, s - 2 * inset - width, s - 2 * inset - width);
  };
  if (classes.has("layout-mine") && ch === "#") {
    ctx.save();
    ctx.translate(dx, dy);
    drawMine(ctx, s, { alpha: 0.45, highlight: false });
    ctx.restore();
  }
  if (classes.has("hint")) {
    const colour = RING[["safe", "mine", "guess"].find((k) => classes.has(`hint-${k}`)) ?? "safe"];
    ctx.save();
    ctx.globalAlpha = 0.3;
    ctx.fillStyle = colour;
    ctx.fillRect(dx, dy, s, s);
    ctx.restore();
    ring(colour, 3 * unit);
    ring("rgb(255 255 255 / .75)", 2 * unit, 3 * unit);
  }
  if (classes.has("hint-source")) ring("#0b57d0", 2 * unit);
  if (classes.has("replay-last")) ring("#0b57d0", 2 * unit);
  if (classes.has("fatal")) {
    ring("#000", 3 * unit);
    ring("#ffd400", 2 * unit, 3 * unit);
  }
}
