// Stand-ins for what the browser gives the page's modules: a socket that records what is
// sent and delivers what a test says the server sends, timers that run when the test
// moves time on, and game views and diffs shaped as the service sends them.

/** Timers that fire only when `advance(ms)` moves time past them. */
export class ManualTimers {
  constructor() {
    this.now = 0;
    this.lastId = 0;
    this.due = new Map();
    this.setTimeout = (fn, ms = 0) => {
      const id = ++this.lastId;
      this.due.set(id, { at: this.now + ms, fn });
      return id;
    };
    this.clearTimeout = (id) => {
      this.due.delete(id);
    };
  }

  advance(ms) {
    const end = this.now + ms;
    for (;;) {
      let next = null;
      for (const [id, t] of this.due) if (t.at <= end && (!next || t.at < next[1].at)) next = [id, t];
      if (!next) break;
      this.due.delete(next[0]);
      this.now = next[1].at;
      next[1].fn();
    }
    this.now = end;
  }
}

/** A WebSocket as the session uses it; the test opens, feeds and closes it. */
export class FakeSocket {
  constructor(url) {
    this.url = url;
    this.sent = [];
    this.closed = null;
    this.onopen = this.onmessage = this.onclose = this.onerror = null;
  }

  send(text) {
    if (this.closed) throw new Error("send on a closed socket");
    this.sent.push(JSON.parse(text));
  }

  close(code = 1000) {
    this.closed = code;
  }

  // the server's side
  accept() {
    this.onopen?.();
  }

  deliver(message) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }

  drop(code = 1006) {
    this.closed = code;
    this.onclose?.({ code });
  }
}

export const T0 = Date.parse("2026-01-01T00:00:00.000Z");
export const stamp = (ms) => new Date(T0 + ms).toISOString();

/** A 3x3 game view at `version`, rows as given. */
export function view({ version = 0, status = "ready", board = ["###", "###", "###"], paused = false, ...rest } = {}) {
  return {
    id: "0123456789abcdef0123456789abcdef",
    version,
    status,
    width: board[0].length,
    height: board.length,
    mines: 2,
    mines_left: 2,
    preset: null,
    first_click: "zero",
    no_guess: false,
    question_marks: false,
    paused,
    player: null,
    daily: null,
    board,
    created_at: stamp(0),
    started_at: null,
    ended_at: null,
    ended_by: status === "won" || status === "lost" ? "move" : null,
    elapsed_ms: 0,
    server_time: stamp(0),
    stats: null,
    ...rest,
  };
}

/** A diff to `version` changing `cells` ([x, y, char]). */
export function diff(version, cells, { action = "reveal", x = 0, y = 0, status = "playing", at = 1000, paused = false, ...rest } = {}) {
  return {
    type: "diff",
    version,
    status,
    move: { action, x, y, at: stamp(at) },
    cells,
    mines_left: 2,
    started_at: stamp(0),
    ended_at: null,
    elapsed_ms: at,
    paused,
    ...rest,
  };
}
