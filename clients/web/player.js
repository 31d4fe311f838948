// This browser's player: a guest registered on the first visit (the service makes up a
// friendly name), its token kept in the browser and sent with every new game, so the
// games, stats and leaderboard entries are the player's; and a rename. Also the rule of
// names and what the page says when the service refuses one.

// The names the service takes (DESIGN section 8), ignoring case when telling them apart.
export const NAME_RULE = /^[A-Za-z0-9_-]{2,20}$/;
export const NAME_HELP = "2 to 20 letters, digits, dashes (-) or underscores (_), no spaces";

/** What is wrong with a name before it is sent, or null. */
export function nameProblem(name) {
  if (!name) return "Type a name.";
  if (NAME_RULE.test(name)) return null;
  if (name.length < 2) return "A name has at least 2 characters.";
  if (name.length > 20) return "A name has at most 20 characters.";
  return `A name takes ${NAME_HELP}.`;
}

/** What the page says when the service refuses `name` (an ApiError). */
export function renameMessage(err, name) {
  switch (err.code) {
    case "name_taken":
      return `“${name}” is taken: names are unique, ignoring upper and lower case. Try another one.`;
    case "invalid_request":
      return `The service does not take “${name}”: a name takes ${NAME_HELP}.`;
    case "unauthorized":
      return "This browser's player key is no longer valid; reload the page to get a new player.";
    case "rate_limited":
      return "Too many tries at once; wait a moment and try again.";
    default:
      return `Could not change the name: ${err.message}`;
  }
}

/**
 * The name a played game is shown as played by: this browser's player's current name for
 * a game of theirs (a rename since it began shows at once), else the name the game keeps.
 * `game`: a Game (`player`, `playerId`); `player`: this browser's player, or null.
 */
export function playingAs(game, player) {
  if (!game || !game.player) return null;
  return player && game.playerId && game.playerId === player.id ? player.name : game.player;
}

export class Me {
  /**
   * `api`: the service. `store`: where the player lives in this browser (`get`, `set`,
   * `forget`; see storage.js). `onChange(player, { registered })` once a guest is
   * registered or the name changed.
   */
  constructor({ api, store, onChange = () => {} }) {
    this.api = api;
    this.store = store;
    this.onChange = onChange;
    this.player = store.get(); // { id, name, token } or null
    this.pending = null;
  }

  get id() {
    return this.player ? this.player.id : null;
  }

  get name() {
    return this.player ? this.player.name : null;
  }

  /**
   * The player, once known: the one kept here (checked with the service once per page,
   * since another tab may have renamed it), or a new guest. Null while the service
   * cannot be reached: games are then anonymous, and the next call tries again.
   */
  ready() {
    if (!this.pending) {
      this.pending = this.settle().then((p) => {
        if (!p) this.pending = null;
        return p;
      });
    }
    return this.pending;
  }

  /** The token new games carry (null without a player). */
  async token() {
    const p = await this.ready();
    return p ? p.token : null;
  }

  async settle() {
    const kept = this.player;
    if (kept) {
      try {
        this.keep((await this.api.me(kept.token)).name);
        return this.player;
      } catch (err) {
        // A token the service does not know (its data was wiped): start again as a guest.
        if (err.code !== "unauthorized" && err.code !== "not_found") return this.player;
        this.store.forget();
        this.player = null;
      }
    }
    try {
      const created = await this.api.register();
      this.player = { id: created.player.id, name: created.player.name, token: created.token };
      this.store.set(this.player);
      this.onChange(this.player, { registered: true });
      return this.player;
    } catch {
      return null;
    }
  }

  keep(name) {
    if (!this.player || name === this.player.name) return;
    this.player = { ...this.player, name };
    this.store.set(this.player);
    this.onChange(this.player, { registered: false });
  }

  /** Rename the player: its view, or an ApiError (see renameMessage). */
  async rename(name) {
    const p = await this.ready();
    if (!p) throw Object.assign(new Error("The server cannot be reached."), { code: "network" });
    const view = await this.api.rename(p.token, name);
    this.keep(view.name);
    return view;
  }
}
