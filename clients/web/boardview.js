// The board on screen: a canvas that paints the cells in view, under a scroll area as big
// as the board at the current cell size (so the browser scrolls it, and the accessible
// grid's cells sit over the cells they name). It owns the zoom (the cell size, fit to the
// room the page gives it, chosen by the player, or the whole board), panning, and the
// signs that more of the board is out of view: shadows at the edges, the overview (the
// whole board in small, with the part in view framed) and the rows and columns in view.
//
// What a cell shows comes from the board (board.js) through `scene`: the game's cells and
// the pressed, pending, marked and nudged cells. Painting happens once per frame at most,
// whatever changed in between.

import { BoardImage, drawMarks, PRESSED, scratchCanvas, Sprites, slotOf } from "./paint.js";

// Cell sizes (CSS pixels): the largest the player can zoom to; the smallest worth a sprite
// (below it, cells are drawn a colour each); the smallest a finger or a mouse can hit.
export const MAX_CELL = 64;
const MIN_SPRITE_PX = 7;
export const MIN_TOUCH_CELL = 30;
export const MIN_MOUSE_CELL = 22;
const COMFORT_CELL = 40;
// A zoom rests once no step came for this long (ms).
const SETTLE_MS = 150;
// A change to more cells than this is painted at the next frame, not at once.
export const MANY_CELLS = 256;
// A finished board (or a replay) is only looked at: its cells may be smaller, down to
// this, to show all of it beside the result (mines are still told apart at this size).
export const MIN_END_CELL = 8;
// Zoom steps of the buttons, and of the keys + and -.
const ZOOM_STEP = 1.25;
const OVERVIEW = { width: 120, height: 34 };

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

/**
 * The cell size as the zoom bar says it (CSS pixels): whole from 10 px up, tenths below,
 * two digits under 1 px (a huge board's whole view: "0.36 px"), so it never says "0 px"
 * and each zoom step changes what it says.
 */
export function cellSizeText(size) {
  if (!(size > 0)) return "0";
  if (size >= 9.95) return String(Math.round(size));
  const text = size >= 1 ? size.toFixed(1) : size.toPrecision(2);
  return text.replace(/\.?0+$/, "");
}

/** Whether the main pointer is a finger. */
export function coarsePointer() {
  return matchMedia("(pointer: coarse)").matches;
}

/** The smallest cell a player can hit without zooming in. */
export function minPlayableCell() {
  return coarsePointer() ? MIN_TOUCH_CELL : MIN_MOUSE_CELL;
}

/**
 * Cell size `size` (CSS pixels) on a screen of `dpr` device pixels to the CSS pixel:
 * whole device pixels, rounded down (so "the whole board" never comes out a pixel too
 * wide); sizes under a few device pixels stay as they are.
 */
export function deviceCell(size, dpr) {
  const device = size * dpr;
  return device >= MIN_SPRITE_PX ? Math.floor(device + 1e-6) / dpr : size;
}

/**
 * Whether cells of `size` are too small to play, `least` the smallest playable size: a
 * screen whose pixel ratio is not whole (2.625, 2.75, 1.5) rounds `least` itself down a
 * little (30 px is 29.7 at 2.625), and that is still playable.
 */
export function tooSmall(size, least, dpr) {
  return size < deviceCell(least, dpr) - 0.01;
}

/**
 * The room for a board area: as wide as the page allows, as tall as the window allows
 * with everything else of `section` (above and below the area) still in view. `tallest`:
 * the most it can take with the frame's counters above it and the rest of `section` below
 * it (zoom bar, controls) in the window, once the page is scrolled to its frame.
 */
export function roomFor(area, section) {
  const sum = (el, ...sides) => {
    const style = getComputedStyle(el);
    return sides.reduce((total, side) => total + (parseFloat(style[side]) || 0), 0);
  };
  const main = section.parentElement;
  const frame = area.closest(".frame") ?? area;
  const sectionStyle = getComputedStyle(section);
  // A short window sets what follows the frame beside it, in a column this wide.
  const beside = parseFloat(sectionStyle.getPropertyValue("--beside")) || 0;
  const mainWidth = main.clientWidth - sum(main, "paddingLeft", "paddingRight")
    - (beside ? beside + (parseFloat(sectionStyle.columnGap) || 0) : 0);
  const areaBox = area.getBoundingClientRect();
  // The counters stand beside the board in a short window: their column is not the board's.
  const panel = frame === area ? null : frame.querySelector(":scope > .panel");
  const panelBox = panel?.getBoundingClientRect();
  const panelBeside = panelBox && panelBox.width > 0 && panelBox.right <= areaBox.left + 1
    ? panelBox.width + sum(panel, "marginLeft", "marginRight") : 0;
  const chromeX = sum(area, "borderLeftWidth", "borderRightWidth") + panelBeside
    + (frame === area ? 0 : sum(frame, "paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth"));
  const chromeY = sum(area, "borderTopWidth", "borderBottomWidth");
  const top = areaBox.top + scrollY;
  // What follows the section in the page (help, the page's padding) may stay out of view;
  // what stands beside the frame takes none of its height.
  // The frame's end: under its last part (the counters beside the board may reach lower).
  // The zoom bar too may stand beside the board, under the counters (style.css): then
  // nothing of the frame is under the board.
  const lastBox = frame === area ? areaBox : frame.lastElementChild.getBoundingClientRect();
  const frameEnd = frame === area ? areaBox.bottom
    : (lastBox.right <= areaBox.left + 1 ? areaBox.bottom : lastBox.bottom)
      + sum(frame, "paddingBottom", "borderBottomWidth");
  const end = beside ? frameEnd : section.getBoundingClientRect().bottom;
  const below = end - areaBox.bottom;
  const windowHeight = document.documentElement.clientHeight;
  const counters = areaBox.top - frame.getBoundingClientRect().top;
  // In a short window the page may scroll to the frame, and what is under it out of view.
  const under = shortWindow() ? frameEnd - areaBox.bottom : below;
  return {
    width: Math.max(60, Math.min(mainWidth, 1600) - chromeX),
    height: Math.max(90, windowHeight - top - below - chromeY),
    tallest: Math.max(90, windowHeight - counters - under - chromeY),
  };
}

/** Whether the window is short (a phone held sideways, a page zoomed far in: style.css). */
export function shortWindow() {
  return matchMedia("(max-height: 500px)").matches;
}

function scrollbarSize() {
  const probe = document.createElement("div");
  probe.style.cssText = "position:absolute;top:-999px;width:80px;height:80px;overflow:scroll";
  document.body.append(probe);
  const size = probe.offsetWidth - probe.clientWidth;
  probe.remove();
  return size;
}

export class BoardView {
  /**
   * `els`: { area, canvas, scroller, space, grid, overview, where, zoomIn, zoomOut, fit, size }.
   * `scene`: { game, pressed, pending, marks, nudges }. `onView()`: the part in view changed.
   * `onZoom(cell)`: the player chose a cell size (null: fit the window again).
   */
  constructor(els, scene, { onView = () => {}, onZoom = () => {} } = {}) {
    this.els = els;
    this.scene = scene;
    this.onView = onView;
    this.onZoom = onZoom;
    this.ctx = els.canvas.getContext("2d", { alpha: false });
    this.width = 0;
    this.height = 0;
    this.cell = 32; // CSS pixels
    this.dpr = 1;
    this.room = null;
    this.preferred = null; // the cell size the player chose; null: fit the room
    this.sprites = null;
    this.image = null;
    this.frame = 0;
    this.scrollbar = null;
    this.picture = null; // the overview's picture of the board
    this.spriteSets = new Map(); // sprites by size, the last few used
    this.zooming = false; // a zoom under way: the grid's elements follow once it rests
    this.settleTimer = 0;
    this.overviewStale = true;
    els.scroller.addEventListener("scroll", () => this.viewChanged(), { passive: true });
    els.scroller.addEventListener("wheel", (e) => this.onWheel(e), { passive: false });
    if (els.overview) this.wireOverview();
    els.zoomIn?.addEventListener("click", () => this.zoomBy(ZOOM_STEP, null, { choose: true }));
    els.zoomOut?.addEventListener("click", () => this.zoomBy(1 / ZOOM_STEP, null, { choose: true }));
    els.fit?.addEventListener("click", () => this.showAll());
    // The size shown is a button too: back to fitting the board to the window.
    els.size?.addEventListener("click", () => this.onZoom(null));
  }

  // ---- the board and its size -------------------------------------------------------------

  /** A board of this size (a new game, or the same size again: then the view stays). */
  setBoard(width, height) {
    if (width === this.width && height === this.height && this.image) return false;
    this.width = width;
    this.height = height;
    this.image = new BoardImage(width, height);
    this.els.grid.setAttribute("aria-rowcount", String(height));
    this.els.grid.setAttribute("aria-colcount", String(width));
    return true;
  }

  /** Every cell changed (a new game or a view): the picture is made again. */
  refreshAll() {
    if (this.scene.game) this.image.setAll(this.scene.game.cells);
    this.overviewStale = true;
    this.requestDraw();
  }

  /**
   * These cells changed: a few are painted now rather than at the next frame, so a move
   * shows in the first frame after its answer; many (a cascade) at the next frame, so
   * the work is not all in one task.
   */
  refresh(indices) {
    if (this.scene.game) this.image.set(indices, this.scene.game.cells);
    this.overviewStale = true;
    if (indices.length > MANY_CELLS) this.requestDraw();
    else this.drawNow();
  }

  /**
   * The cell size that fits the board in `room`, as large as comfortable, never smaller
   * than `least` (by default: too small to hit).
   */
  fitCell(room, least = minPlayableCell()) {
    const fit = Math.min(room.width / this.width, room.height / this.height);
    return clamp(Math.floor(fit), least, COMFORT_CELL);
  }

  /** The smallest cell size: the whole board in the room. */
  allCell() {
    const room = this.room ?? { width: 300, height: 300 };
    return Math.min(room.width / this.width, room.height / this.height, MAX_CELL);
  }

  /**
   * Size the view for `room` ({ width, height } in CSS pixels), with the cell size the
   * player prefers (`preferred`, null to fit the board to the room, with cells no smaller
   * than `least`). `keep`: the board's middle in view stays in view (the same board
   * again), else the view starts at the cell `start` (or, [x, y], that point in cells).
   */
  layout(room, preferred, { keep = false, start = 0, least = undefined } = {}) {
    this.room = room;
    this.preferred = preferred;
    const target = preferred ?? this.fitCell(room, least);
    const centre = keep ? this.centreCell() : null;
    this.setCell(target);
    this.sizeScroller();
    if (centre) this.centreOn(centre[0], centre[1]);
    else if (Array.isArray(start)) this.centreOn(start[0], start[1]);
    else if (start != null) this.reveal(start, { centre: true });
    this.viewChanged();
  }

  /** The scroll area: the board's size, up to the room (with room for scroll bars). */
  sizeScroller() {
    const room = this.room;
    if (!room) return;
    if (this.scrollbar === null) this.scrollbar = scrollbarSize();
    const bar = this.scrollbar;
    const bw = this.width * this.cell;
    const bh = this.height * this.cell;
    // A board fitted to the room whose smallest playable cells still leave it too tall for
    // what the page shows above it is shown whole when it fits `tallest`: the page scrolls
    // to it, rather than the board inside a slot.
    const whole = this.preferred == null && bw <= room.width && bh <= (room.tallest ?? 0);
    let w = Math.min(bw, room.width);
    let h = whole ? bh : Math.min(bh, room.height);
    if (bw > w && h + bar <= room.height) h = Math.min(h + bar, room.height);
    if (bh > h && w + bar <= room.width) w = Math.min(w + bar, room.width);
    const s = this.els.scroller.style;
    s.width = `${Math.ceil(w)}px`;
    s.height = `${Math.ceil(h)}px`;
  }

  /**
   * Take cell size `cell` (CSS pixels), snapped to whole device pixels. `settled`: the
   * grid's elements take the size now (else once the zoom rests: see `zoomTo`).
   */
  setCell(cell, { settled = true } = {}) {
    this.dpr = window.devicePixelRatio || 1;
    const min = Math.min(this.allCell(), minPlayableCell(), MIN_END_CELL);
    const size = deviceCell(clamp(cell, min, MAX_CELL), this.dpr);
    this.cell = size;
    const space = this.els.space.style;
    space.width = `${this.width * size}px`;
    space.height = `${this.height * size}px`;
    if (settled) this.settle();
    this.els.area.dataset.zoom = this.small ? "small" : "play";
    if (this.els.size) {
      const text = cellSizeText(size);
      this.els.size.textContent = `${text} px`;
      this.els.size.setAttribute("aria-label", `Cell size ${text} pixels: fit the window`);
    }
  }

  // ---- what is in view ------------------------------------------------------------------

  /** The cells in view: [x0, y0, x1, y1] (inclusive). */
  visible() {
    const sc = this.els.scroller;
    const c = this.cell;
    const x0 = clamp(Math.floor(sc.scrollLeft / c), 0, this.width - 1);
    const y0 = clamp(Math.floor(sc.scrollTop / c), 0, this.height - 1);
    const x1 = clamp(Math.ceil((sc.scrollLeft + sc.clientWidth) / c) - 1, x0, this.width - 1);
    const y1 = clamp(Math.ceil((sc.scrollTop + sc.clientHeight) / c) - 1, y0, this.height - 1);
    return [x0, y0, x1, y1];
  }

  /** The cells whole in view (none cut by the view's edges): [x0, y0, x1, y1] (inclusive). */
  wholeInView() {
    const sc = this.els.scroller;
    const c = this.cell;
    const eps = 0.5; // a cell within half a pixel of whole is whole
    const x0 = clamp(Math.ceil((sc.scrollLeft - eps) / c), 0, this.width - 1);
    const y0 = clamp(Math.ceil((sc.scrollTop - eps) / c), 0, this.height - 1);
    const x1 = clamp(Math.floor((sc.scrollLeft + sc.clientWidth + eps) / c) - 1, x0, this.width - 1);
    const y1 = clamp(Math.floor((sc.scrollTop + sc.clientHeight + eps) / c) - 1, y0, this.height - 1);
    return [x0, y0, x1, y1];
  }

  centreCell() {
    const sc = this.els.scroller;
    const c = this.cell;
    return [(sc.scrollLeft + sc.clientWidth / 2) / c, (sc.scrollTop + sc.clientHeight / 2) / c];
  }

  /** Put board point (x, y) (in cells) in the middle of the view. */
  centreOn(x, y) {
    const sc = this.els.scroller;
    sc.scrollLeft = x * this.cell - sc.clientWidth / 2;
    sc.scrollTop = y * this.cell - sc.clientHeight / 2;
  }

  /** Scroll cell `i` into view: to the nearest edge, or to the middle. */
  reveal(i, { centre = false } = {}) {
    if (!this.width) return;
    const x = i % this.width;
    const y = Math.floor(i / this.width);
    const sc = this.els.scroller;
    const c = this.cell;
    if (centre) {
      this.centreOn(x + 0.5, y + 0.5);
      return;
    }
    const left = x * c;
    const top = y * c;
    if (left < sc.scrollLeft) sc.scrollLeft = left;
    else if (left + c > sc.scrollLeft + sc.clientWidth) sc.scrollLeft = left + c - sc.clientWidth;
    if (top < sc.scrollTop) sc.scrollTop = top;
    else if (top + c > sc.scrollTop + sc.clientHeight) sc.scrollTop = top + c - sc.clientHeight;
  }

  /** The cell under a point of the window, or -1. */
  cellAt(clientX, clientY) {
    const r = this.els.space.getBoundingClientRect();
    const x = Math.floor((clientX - r.left) / this.cell);
    const y = Math.floor((clientY - r.top) / this.cell);
    return x >= 0 && y >= 0 && x < this.width && y < this.height ? y * this.width + x : -1;
  }

  viewChanged() {
    this.requestDraw();
    this.renderSigns();
    this.onView();
  }

  // ---- zoom and pan -----------------------------------------------------------------------

  /** Whether cells are too small to play at this size. */
  get small() {
    return tooSmall(this.cell, minPlayableCell(), this.dpr);
  }

  /**
   * Zoom by `factor` around a point of the window (the view's middle when null); `choose`:
   * the player picked this size, which new boards take too.
   */
  zoomBy(factor, point = null, { choose = false } = {}) {
    this.zoomTo(this.cell * factor, point, { choose });
  }

  /**
   * Zoom to cell size `cell` around a point of the window. While a `continuous` zoom goes
   * on (a pinch, a wheel), only the canvas follows it frame by frame; the grid's elements
   * take the new size once it rests.
   */
  zoomTo(cell, point = null, { choose = false, continuous = false } = {}) {
    const sc = this.els.scroller;
    const before = this.cell;
    const box = sc.getBoundingClientRect();
    const fx = point ? point.x - box.left - sc.clientLeft : sc.clientWidth / 2;
    const fy = point ? point.y - box.top - sc.clientTop : sc.clientHeight / 2;
    const bx = (sc.scrollLeft + fx) / before;
    const by = (sc.scrollTop + fy) / before;
    clearTimeout(this.settleTimer);
    this.zooming = continuous;
    if (continuous) {
      this.settleTimer = setTimeout(() => {
        this.settle();
        this.onView();
      }, SETTLE_MS);
    }
    this.setCell(cell, { settled: !continuous });
    this.sizeScroller();
    sc.scrollLeft = bx * this.cell - fx;
    sc.scrollTop = by * this.cell - fy;
    if (choose) {
      this.preferred = this.cell;
      this.onZoom(this.cell);
    }
    this.viewChanged();
  }

  /** The grid's elements take the cell size: the zoom has come to rest. */
  settle() {
    clearTimeout(this.settleTimer);
    this.zooming = false;
    this.els.grid.style.setProperty("--cell", `${this.cell}px`);
  }

  /** The whole board in view, however small its cells. */
  showAll() {
    this.setCell(this.allCell());
    this.sizeScroller();
    this.els.scroller.scrollLeft = 0;
    this.els.scroller.scrollTop = 0;
    this.viewChanged();
  }

  panBy(dx, dy) {
    const sc = this.els.scroller;
    sc.scrollLeft += dx;
    sc.scrollTop += dy;
  }

  onWheel(e) {
    // Ctrl + wheel, and a touchpad's pinch (which the browser sends as one), zoom the board.
    if (!e.ctrlKey) return;
    e.preventDefault();
    const point = { x: e.clientX, y: e.clientY };
    this.zoomTo(this.cell * Math.exp(-e.deltaY / 300), point, { choose: true, continuous: true });
  }

  // ---- the signs of what is out of view ----------------------------------------------------

  renderSigns() {
    const sc = this.els.scroller;
    const more = [];
    if (sc.scrollLeft > 1) more.push("left");
    if (sc.scrollLeft + sc.clientWidth < sc.scrollWidth - 1) more.push("right");
    if (sc.scrollTop > 1) more.push("up");
    if (sc.scrollTop + sc.clientHeight < sc.scrollHeight - 1) more.push("down");
    const text = more.join(" ");
    const area = this.els.area;
    if (area.dataset.more !== text) area.dataset.more = text;
    const where = this.els.where;
    if (where && this.width) {
      const [x0, y0, x1, y1] = this.wholeInView();
      const span = (a, b, n, what) => (a === 0 && b === n - 1 ? `all ${n} ${what}` : `${what} ${a + 1}–${b + 1} of ${n}`);
      const words = more.length
        ? `In view: ${span(x0, x1, this.width, "columns")}, ${span(y0, y1, this.height, "rows")}`
        : "The whole board is in view";
      if (where.textContent !== words) where.textContent = words;
    }
  }

  wireOverview() {
    const ov = this.els.overview;
    const go = (e) => {
      const r = ov.getBoundingClientRect();
      const k = Math.max(this.width / r.width, this.height / r.height);
      const ox = (r.width - this.width / k) / 2;
      const oy = (r.height - this.height / k) / 2;
      this.centreOn((e.clientX - r.left - ox) * k, (e.clientY - r.top - oy) * k);
    };
    ov.addEventListener("pointerdown", (e) => {
      e.preventDefault();
      ov.setPointerCapture(e.pointerId);
      go(e);
    });
    ov.addEventListener("pointermove", (e) => {
      if (ov.hasPointerCapture(e.pointerId)) go(e);
    });
  }

  // ---- painting ---------------------------------------------------------------------------

  requestDraw() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  drawNow() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.draw();
  }

  /** Paint now (what the next frame shows). */
  draw() {
    const { canvas, scroller } = this.els;
    const game = this.scene.game;
    const dpr = this.dpr;
    const cw = scroller.clientWidth;
    const ch = scroller.clientHeight;
    const W = Math.max(1, Math.round(cw * dpr));
    const H = Math.max(1, Math.round(ch * dpr));
    if (canvas.width !== W || canvas.height !== H) {
      canvas.width = W;
      canvas.height = H;
      canvas.style.width = `${W / dpr}px`;
      canvas.style.height = `${H / dpr}px`;
    }
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = "#c0c0c0";
    ctx.fillRect(0, 0, W, H);
    if (!game || !this.image) return;
    const image = this.image.flush();
    const s = this.cell * dpr;
    const ox = Math.round(scroller.scrollLeft * dpr);
    const oy = Math.round(scroller.scrollTop * dpr);
    const [x0, y0, x1, y1] = this.visible();
    const count = (x1 - x0 + 1) * (y1 - y0 + 1);
    if (s < MIN_SPRITE_PX || count > 60_000) {
      // Cells a few pixels wide: one colour each, from the board's picture.
      ctx.imageSmoothingEnabled = s < 1;
      const sx = ox / s;
      const sy = oy / s;
      const sw = Math.min(W / s, this.width - sx);
      const sh = Math.min(H / s, this.height - sy);
      if (sw > 0 && sh > 0) ctx.drawImage(image, sx, sy, sw, sh, 0, 0, sw * s, sh * s);
    } else {
      this.drawSprites(ctx, game, Math.round(s), ox, oy, [x0, y0, x1, y1]);
    }
    this.drawOverview();
    const painted = String(game.version ?? 0);
    if (this.els.area.dataset.painted !== painted) this.els.area.dataset.painted = painted;
  }

  drawSprites(ctx, game, s, ox, oy, [x0, y0, x1, y1]) {
    let sprites = this.spriteSets.get(s);
    if (!sprites) {
      sprites = new Sprites(s);
      this.spriteSets.set(s, sprites);
      if (this.spriteSets.size > 12) this.spriteSets.delete(this.spriteSets.keys().next().value);
    }
    const { pressed, pending, marks, nudges } = this.scene;
    const cells = game.cells;
    const w = this.width;
    for (let y = y0; y <= y1; y++) {
      const dy = y * s - oy;
      let i = y * w + x0;
      for (let x = x0; x <= x1; x++, i++) {
        sprites.draw(ctx, slotOf(cells[i]), x * s - ox, dy);
      }
    }
    const flat = (i) => {
      if (!game.isHidden(i)) return;
      const x = i % w;
      const y = (i - x) / w;
      if (x >= x0 && x <= x1 && y >= y0 && y <= y1) sprites.draw(ctx, PRESSED, x * s - ox, y * s - oy);
    };
    pressed.forEach(flat);
    pending.forEach(flat);
    // Marks: gather each marked cell's classes, then draw them over it.
    if (marks.size) {
      const classes = new Map();
      for (const mark of marks.values()) {
        for (const i of mark.cells) {
          const x = i % w;
          const y = (i - x) / w;
          if (x < x0 || x > x1 || y < y0 || y > y1) continue;
          let set = classes.get(i);
          if (!set) classes.set(i, (set = new Set()));
          for (const c of mark.cls.split(" ")) set.add(c);
        }
      }
      for (const [i, set] of classes) {
        const x = i % w;
        drawMarks(ctx, set, String.fromCharCode(cells[i]), x * s - ox, ((i - x) / w) * s - oy, s);
      }
    }
    for (const [i, shift] of nudges) {
      const x = i % w;
      const y = (i - x) / w;
      if (x < x0 || x > x1 || y < y0 || y > y1) continue;
      ctx.fillStyle = "#c0c0c0";
      ctx.fillRect(x * s - ox, y * s - oy, s, s);
      sprites.draw(ctx, slotOf(cells[i]), x * s - ox + Math.round(shift * s), y * s - oy);
    }
  }

  /**
   * The overview: the whole board in small, the part in view framed. The small picture
   * is made again only when cells changed; a pan only moves the frame.
   */
  drawOverview() {
    const ov = this.els.overview;
    if (!ov || !this.image) return;
    const dpr = this.dpr;
    const k = Math.min(OVERVIEW.width / this.width, OVERVIEW.height / this.height);
    const w = Math.max(2, Math.round(this.width * k));
    const h = Math.max(2, Math.round(this.height * k));
    if (ov.width !== Math.round(w * dpr) || ov.height !== Math.round(h * dpr)) {
      ov.width = Math.round(w * dpr);
      ov.height = Math.round(h * dpr);
      ov.style.width = `${w}px`;
      ov.style.height = `${h}px`;
      this.picture = null;
    }
    if (!this.picture || this.picture.width !== ov.width || this.picture.height !== ov.height) {
      this.picture = scratchCanvas(ov.width, ov.height);
      this.overviewStale = true;
    }
    if (this.overviewStale) {
      const sctx = this.picture.getContext("2d");
      sctx.imageSmoothingEnabled = ov.width < this.width;
      sctx.drawImage(this.image.canvas, 0, 0, this.width, this.height, 0, 0, ov.width, ov.height);
      this.overviewStale = false;
    }
    const ctx = ov.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(this.picture, 0, 0);
    const sc = this.els.scroller;
    const f = ov.width / (this.width * this.cell);
    const lw = Math.max(1, Math.round(1.5 * dpr));
    ctx.lineWidth = lw;
    ctx.strokeStyle = "#0b57d0";
    ctx.strokeRect(
      sc.scrollLeft * f + lw / 2, sc.scrollTop * f + lw / 2,
      Math.max(lw, Math.min(ov.width, sc.clientWidth * f) - lw), Math.max(lw, Math.min(ov.height, sc.clientHeight * f) - lw),
    );
  }
}
