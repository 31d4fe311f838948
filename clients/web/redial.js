// A WebSocket that comes back by itself: the part a game's session (session.js) and a
// match's feed (match.js) share. It dials again after a drop, quickly at first and then
// backing off with jitter, so a restarted server is not met by every page at once; it
// drops a socket that has gone silent for longer than the service's heartbeats allow; and
// it forgets a socket the moment it is dropped, so a late event from it changes nothing.
//
// What a socket carries is the subclass's: it names the address to dial (resuming from
// what it holds) and hears what is said on the hooks below.

// The service sends a heartbeat every 15 s while nothing else happens.
export const SILENCE_MS = 40_000;

/** A socket message's JSON, or null when it is not JSON. */
export function readJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The delay before reconnection attempt `failures` (1, 2, …): quick first, then backing off. */
export function retryDelay(failures, random = Math.random) {
  if (failures <= 1) return 150;
  const base = Math.min(10_000, 300 * 2 ** Math.min(failures - 1, 6));
  return base / 2 + random() * (base / 2);
}

/** Close a socket this page no longer listens to. */
export function closeQuietly(ws) {
  ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
  try {
    ws.close(1000);
  } catch {
    // Closing a socket that never opened can throw; it is gone either way.
  }
}

export class Redial {
  /**
   * `connect(url)`: a WebSocket (the browser's by default). `timers`: setTimeout /
   * clearTimeout. `random`: the jitter's source.
   */
  constructor({ connect = (address) => new WebSocket(address), timers = globalThis, random = Math.random }) {
    this.openSocket = connect;
    this.timers = timers;
    this.random = random;
    this.ws = null;
    this.open = false;
    this.stopped = true;
    this.failures = 0;
    this.retryTimer = 0;
    this.watchdog = 0;
  }

  start() {
    this.stopped = false;
    this.dial();
  }

  stop() {
    this.stopped = true;
    this.timers.clearTimeout(this.retryTimer);
    this.drop();
  }

  /** Come back now if the socket is down (the network returned, the page is shown again). */
  wake() {
    if (!this.stopped && !this.ws) this.redial();
  }

  /**
   * The connection is gone though the socket may not know it yet (the browser went offline,
   * or a move found it dead): drop it, and dial again after the backoff, saying so at once.
   */
  lose() {
    if (this.stopped) return;
    this.drop();
    this.retry();
  }

  /** Drop the socket and dial again at once, resuming from what is held. */
  resync() {
    if (this.stopped) return;
    this.drop();
    this.redial();
  }

  /** Forget the socket, closing it. */
  drop() {
    const ws = this.ws;
    this.ws = null;
    this.open = false;
    this.timers.clearTimeout(this.watchdog);
    if (ws) closeQuietly(ws);
    this.dropped();
  }

  /** Dial again after the backoff's next delay. */
  retry() {
    if (this.stopped) return;
    this.failures += 1;
    this.retrying();
    this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = this.timers.setTimeout(() => this.dial(), retryDelay(this.failures, this.random));
  }

  redial() {
    this.timers.clearTimeout(this.retryTimer);
    this.dial();
  }

  kick() {
    this.timers.clearTimeout(this.watchdog);
    this.watchdog = this.timers.setTimeout(() => this.resync(), SILENCE_MS);
  }

  dial() {
    if (this.stopped) return;
    let ws;
    try {
      ws = this.openSocket(this.address());
    } catch {
      this.retry();
      return;
    }
    this.ws = ws;
    this.dialing();
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.kick();
      this.opened(ws);
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.kick();
      this.failures = 0;
      this.heard(event.data, ws);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.drop();
      if (!this.stopped && this.closed(event)) this.retry();
    };
  }

  // ---- the hooks ------------------------------------------------------------------------

  /** The address to dial now. */
  address() {
    throw new Error("a Redial names its address");
  }

  /** A socket is being opened; `this.failures` > 0 when it is not the first try. */
  dialing() {}

  /** The socket `ws` is open. */
  opened(ws) {}

  /** `ws` said `data`. */
  heard(data, ws) {}

  /** The server closed the socket: whether to dial again. */
  closed(event) {
    return true;
  }

  /** The socket was forgotten: what was in flight on it gets no answer. */
  dropped() {}

  /** A retry is scheduled. */
  retrying() {}
}
