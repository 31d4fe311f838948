// The service's match, seek and rating endpoints (DESIGN sections 9-11), each sent with
// this browser's player token; problems come back as ApiErrors, as for games (api.js).

const path = (id) => encodeURIComponent(id);

export class MatchApi {
  /** `api`: the page's Api; `token()`: a promise of the player's token (or null). */
  constructor(api, token) {
    this.api = api;
    this.token = token;
  }

  async send(method, where, body) {
    return this.api.request(method, where, { body, token: await this.token() });
  }

  /** A new match, this player in seat 0: `{ mode, preset, ... }`. Answers the view. */
  async create(settings) {
    return (await this.send("POST", "matches", settings)).match;
  }

  get(id) {
    return this.send("GET", `matches/${path(id)}`);
  }

  join(id) {
    return this.send("POST", `matches/${path(id)}/join`);
  }

  leave(id) {
    return this.send("POST", `matches/${path(id)}/leave`);
  }

  start(id) {
    return this.send("POST", `matches/${path(id)}/start`);
  }

  /** The same match again, once `id` is over: made now (this player in seat 0) or, when
   * another player asked first, with this player seated in it. Answers its view. */
  async rematch(id) {
    return (await this.send("POST", `matches/${path(id)}/rematch`)).match;
  }

  /** Quick pairing: `{ mode: "race", preset, no_guess }`. Answers `{ id, status }`. */
  async seek(settings) {
    return (await this.send("POST", "seeks", settings)).seek;
  }

  seekStatus(id) {
    return this.send("GET", `seeks/${path(id)}`);
  }

  cancelSeek(id) {
    return this.send("DELETE", `seeks/${path(id)}`);
  }

  eventsUrl(id, since) {
    const url = socketUrl(this.api.url(`matches/${path(id)}/events`));
    if (since != null) url.searchParams.set("since", String(since));
    return url.href;
  }

  /** The player's own socket: a `matched` notice when a seek of theirs is paired. */
  playerEventsUrl() {
    return socketUrl(this.api.url("players/me/events")).href;
  }
}

function socketUrl(url) {
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url;
}
