// The public HTTP API, with relative URLs only, so the page works wherever the service
// mounts it; problem+json answers become ApiErrors with the service's stable `code`. The
// game's socket (and the moves sent on it) is the session's: see session.js.

export class ApiError extends Error {
  constructor(status, problem) {
    const p = problem && typeof problem === "object" ? problem : {};
    super(p.detail || p.title || (status ? `HTTP ${status}` : "network error"));
    this.status = status;
    this.code = p.code || (status ? `http_${status}` : "network");
    this.problem = p;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Api {
  constructor(base = document.baseURI) {
    this.base = base;
    // The token new games are made with (a promise of it, or of null): the player's.
    this.playerToken = () => null;
  }

  url(path) {
    return new URL(path, this.base);
  }

  async request(method, path, { body, token, retries = 0 } = {}) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers.Authorization = `Bearer ${token}`;
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

  /** A new game, the player's when the page has a player. */
  async createGame(settings) {
    return this.request("POST", "games", { body: settings, token: await this.playerToken() });
  }

  getGame(id) {
    return this.request("GET", `games/${encodeURIComponent(id)}`, { retries: 2 });
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

  /** Best times on a preset: classic or no-guess, all time or one day's daily board,
   * people's or bots'. */
  leaderboard(preset, { noGuess = false, date = null, limit = 50, bot = false } = {}) {
    const query = new URLSearchParams({ no_guess: String(noGuess), limit: String(limit) });
    if (bot) query.set("bot", "true");
    if (date) query.set("date", date);
    return this.request("GET", `leaderboards/${encodeURIComponent(preset)}?${query}`, { retries: 2 });
  }

  /** A guest player: the service makes up its name. Answers `{ player, token }`. */
  register() {
    return this.request("POST", "players", { body: {} });
  }

  player(id) {
    return this.request("GET", `players/${encodeURIComponent(id)}`, { retries: 2 });
  }

  me(token) {
    return this.request("GET", "players/me", { token, retries: 2 });
  }

  rename(token, name) {
    return this.request("PATCH", "players/me", { token, body: { name } });
  }

  eventsUrl(id, since) {
    const url = this.url(`games/${encodeURIComponent(id)}/events`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    if (since != null) url.searchParams.set("since", String(since));
    return url.href;
  }
}
