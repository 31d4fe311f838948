// The public HTTP API and the live WebSocket, with relative URLs only, so the page
// works wherever the service mounts it.

export class ApiError extends Error {
  constructor(status, problem) {
    const p = problem && typeof problem === "object" ? problem : {};
    super(p.detail || p.title || (status ? `HTTP ${status}` : "network error"));
    this.status = status;
    this.code = p.code || (status ? `http_${status}` : "network");
    this.problem = p;
  }
}

function randomKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Api {
  constructor(base = document.baseURI) {
    this.base = base;
  }

  url(path) {
    return new URL(path, this.base);
  }

  async request(method, path, { body, token, key, retries = 0 } = {}) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers.Authorization = `Bearer ${token}`;
    if (key) headers["Idempotency-Key"] = key;
    for (let attempt = 0; ; attempt++) {
      let response;
      try {
        response = await fetch(this.url(path), {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
          cache: "no-store",
        });
      } catch {
        if (attempt < retries) {
          await sleep(250 * 2 ** attempt);
          continue;
        }
        throw new ApiError(0, { code: "network", detail: "The server cannot be reached." });
      }
      const text = await response.text();
      let data = null;
      try {
        data = text ? JSON.parse(text) : null;
      } catch {
        data = null;
      }
      if (response.ok) return data;
      if ((response.status === 503 || response.status === 429) && attempt < retries) {
        const after = Number(response.headers.get("Retry-After"));
        await sleep(Number.isFinite(after) && after > 0 ? Math.min(after, 5) * 1000 : 500);
        continue;
      }
      throw new ApiError(response.status, data);
    }
  }

  createGame(settings) {
    return this.request("POST", "games", { body: settings });
  }

  getGame(id) {
    return this.request("GET", `games/${encodeURIComponent(id)}`, { retries: 2 });
  }

  /** reveal / flag / chord. The Idempotency-Key makes the retries safe. */
  move(id, action, body, token) {
    return this.request("POST", `games/${encodeURIComponent(id)}/${action}`, {
      body, token, key: randomKey(), retries: 2,
    });
  }

  reset(id, token) {
    return this.request("POST", `games/${encodeURIComponent(id)}/reset`, { token });
  }

  /** A cell to play next. Not retried: every hint the server answers is counted. */
  hint(id, token) {
    return this.request("POST", `games/${encodeURIComponent(id)}/hint`, { token });
  }

  /** "pause" or "resume": both answer a diff, and repeating one changes nothing. */
  pause(id, action, token) {
    return this.request("POST", `games/${encodeURIComponent(id)}/${action}`, { token, retries: 2 });
  }

  replay(id) {
    return this.request("GET", `games/${encodeURIComponent(id)}/replay`, { retries: 2 });
  }

  /** Best times on a preset: classic or no-guess, all time or one day's daily board. */
  leaderboard(preset, { noGuess = false, date = null, limit = 50 } = {}) {
    const query = new URLSearchParams({ no_guess: String(noGuess), limit: String(limit) });
    if (date) query.set("date", date);
    return this.request("GET", `leaderboards/${encodeURIComponent(preset)}?${query}`, { retries: 2 });
  }

  eventsUrl(id, since) {
    const url = this.url(`games/${encodeURIComponent(id)}/events`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (since != null) url.searchParams.set("since", String(since));
    return url.href;
  }
}

/**
 * One game's live feed. Reconnects by itself (backoff with jitter), resuming from the
 * version the page holds (`?since=`), and reports its state for the indicator.
 */
export class LiveFeed {
  constructor(api, id, { version, onMessage, onState, onGone }) {
    this.api = api;
    this.id = id;
    this.version = version;
    this.onMessage = onMessage;
    this.onState = onState;
    this.onGone = onGone;
    this.ws = null;
    this.failures = 0;
    this.stopped = true;
    this.retryTimer = 0;
    this.watchdog = 0;
    this.state = "idle";
    this.wake = () => {
      if (!this.stopped && !this.ws) this.reconnectNow();
    };
  }

  start() {
    this.stopped = false;
    window.addEventListener("online", this.wake);
    document.addEventListener("visibilitychange", this.wake);
    this.connect();
  }

  stop() {
    this.stopped = true;
    window.removeEventListener("online", this.wake);
    document.removeEventListener("visibilitychange", this.wake);
    clearTimeout(this.retryTimer);
    clearTimeout(this.watchdog);
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000);
    this.setState("idle");
  }

  /** Drop the socket and resume from the version the page holds now. */
  resync() {
    if (this.stopped) return;
    const ws = this.ws;
    this.ws = null;
    if (ws) ws.close(1000);
    this.reconnectNow();
  }

  reconnectNow() {
    clearTimeout(this.retryTimer);
    this.connect();
  }

  setState(state) {
    if (state === this.state) return;
    this.state = state;
    this.onState(state);
  }

  kick() {
    clearTimeout(this.watchdog);
    // The server sends a heartbeat every 15 s when the game is quiet.
    this.watchdog = setTimeout(() => this.resync(), 40_000);
  }

  connect() {
    if (this.stopped) return;
    let ws;
    try {
      ws = new WebSocket(this.api.eventsUrl(this.id, this.version()));
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    if (this.failures > 0) this.setState("reconnecting");
    else if (this.state === "idle") this.setState("connecting");
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.kick();
      this.setState("live");
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.kick();
      this.failures = 0;
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      this.onMessage(message);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      clearTimeout(this.watchdog);
      if (this.stopped) return;
      if (event.code === 4404) {
        this.stopped = true;
        this.setState("gone");
        this.onGone?.();
        return;
      }
      this.scheduleRetry();
    };
  }

  scheduleRetry() {
    this.failures += 1;
    this.setState("reconnecting");
    const base = Math.min(10_000, 300 * 2 ** Math.min(this.failures - 1, 6));
    const delay = this.failures === 1 ? 150 : base / 2 + Math.random() * (base / 2);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }
}
