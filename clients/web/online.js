// "Play online": the header button and its dialog. Quick pairing on a preset (a seek,
// told of its pairing on the player's socket at once, and polled too in case that
// socket is down; cancelled on demand or when the dialog closes), and
// private rooms (a race or a co-op match this player creates, shared by its link). Both
// end on the match's page, #/match/<id> (room.js).

import { PlayerFeed, playingElsewhere } from "./match.js";
import { PRESETS } from "./profile.js";

const POLL_MS = 1500;
// Two players side by side: the header button's picture.
const PLAYERS_ICON = '<svg xmlns="http://www.w3.org/2000/svg" aria-hidden="true" focusable="false" viewBox="0 0 24 24" width="18" height="18" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round"><circle cx="8" cy="8" r="3.2"/><circle cx="16.5" cy="9" r="2.7"/><path d="M2.5 19.5c.6-3.4 2.8-5.3 5.5-5.3s4.9 1.9 5.5 5.3M14.2 14.6c.7-.3 1.5-.5 2.3-.5 2.4 0 4.2 1.7 4.8 4.8"/></svg>';
const LABEL = { beginner: "Beginner", intermediate: "Intermediate", expert: "Expert" };
// The modes in a word each (a select shows no more without cutting it), and in a sentence under it.
const MODES = {
  race: ["Race", "Everybody plays the same board; the fastest clear wins."],
  coop: ["Co-op", "One board, played together: every move counts for the team."],
};

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

export class PlayOnline {
  /** `matches`: a MatchApi; `openMatch(id, view)`: go to a match's page (`view`: the match, when known). */
  constructor({ matches, notices, openMatch, timers = globalThis }) {
    Object.assign(this, { matches, notices, openMatch, timers });
    this.seek = null; // { id, preset, timer, feed, since }
    this.build();
  }

  build() {
    this.button = el("button", { type: "button", className: "top-button", id: "online-button", title: "Race other players, or play together" });
    this.button.setAttribute("aria-haspopup", "dialog");
    const icon = el("span", { className: "tool-icon" });
    icon.innerHTML = PLAYERS_ICON;
    this.button.append(icon, el("span", { className: "wide-only", textContent: "Play online" }));
    // Beside the title: the row of tools below it has no room left on a phone.
    document.querySelector(".topbar .title").after(this.button);
    this.button.addEventListener("click", () => this.open());

    const d = (this.dialog = el("dialog", { id: "online-dialog", className: "online-dialog" }));
    d.setAttribute("aria-labelledby", "online-title");
    const form = el("form", { method: "dialog" });
    // Matches are no-guess unless asked otherwise: a race should not turn on a coin toss.
    this.noGuessBox = el("input", { type: "checkbox", id: "online-noguess", checked: true });
    this.seekButtons = PRESETS.map((preset) => {
      const b = el("button", { type: "button", className: "primary", textContent: LABEL[preset] });
      b.dataset.seek = preset;
      b.addEventListener("click", () => this.startSeek(preset));
      return b;
    });
    this.seekStatus = el("p", { className: "hint online-status", id: "online-status", role: "status" });
    this.cancelButton = el("button", { type: "button", id: "online-cancel", textContent: "Stop looking", hidden: true });
    this.cancelButton.addEventListener("click", () => {
      const was = this.seek?.preset;
      this.cancelSeek();
      // The button went with the search: the focus goes to the board it was looking on.
      (this.seekButtons.find((b) => b.dataset.seek === was) ?? this.seekButtons[0]).focus();
    });

    this.mode = el("select", { id: "room-mode" },
      ...Object.entries(MODES).map(([value, [word]]) => el("option", { value, textContent: word })));
    this.modeHint = el("p", { className: "hint online-mode-hint", id: "room-mode-hint" });
    this.mode.setAttribute("aria-describedby", "room-mode-hint");
    const describeMode = () => {
      this.modeHint.textContent = MODES[this.mode.value][1];
    };
    this.mode.addEventListener("change", describeMode);
    describeMode();
    this.preset = el("select", { id: "room-preset" }, ...PRESETS.map((p) => el("option", { value: p, textContent: LABEL[p] })));
    this.seats = el("select", { id: "room-seats" }, ...[2, 3, 4, 5, 6, 7, 8].map((n) => el("option", { value: String(n), textContent: String(n) })));
    const create = el("button", { type: "button", className: "primary", id: "room-create", textContent: "Create room" });
    create.addEventListener("click", () => this.createRoom());
    this.roomStatus = el("p", { className: "hint", role: "status" });

    const field = (label, control) => el("div", { className: "online-field" }, el("label", { htmlFor: control.id, textContent: label }), control);
    // One switch for both ways to play, above them, saying so.
    this.noGuessBox.setAttribute("aria-describedby", "online-noguess-hint");
    form.append(
      el("h2", { id: "online-title", textContent: "Play online" }),
      el("div", { className: "online-common" },
        el("label", { className: "check-row online-check" }, this.noGuessBox, el("span", { textContent: "No guessing" })),
        el("p", { className: "hint", id: "online-noguess-hint", textContent: "Boards that never need a guess, for quick races and private rooms alike." })),
      el("section", { className: "online-part" },
        el("h3", { textContent: "Quick race" }),
        el("p", { textContent: "Race one player of about your rating on the same board. Rated." }),
        el("div", { className: "online-presets", role: "group", ariaLabel: "Find an opponent on" }, ...this.seekButtons),
        this.seekStatus,
        this.cancelButton),
      el("section", { className: "online-part" },
        el("h3", { textContent: "Private room" }),
        el("p", { textContent: "A room of your own: share its link, start when everybody is in." }),
        field("Mode", this.mode), this.modeHint, field("Board", this.preset), field("Seats", this.seats),
        create, this.roomStatus),
      el("div", { className: "dialog-actions" }, el("button", { type: "submit", textContent: "Close" })),
    );
    d.append(form);
    document.body.append(d);
    d.addEventListener("close", () => {
      if (!this.seek) return;
      this.cancelSeek();
      // The dialog's own status went with it (Escape, Close): the notes say it instead.
      this.notices.toast("Stopped looking for an opponent.");
    });
  }

  open() {
    this.roomStatus.textContent = "";
    this.renderSeek();
    this.dialog.showModal();
  }

  // ---- quick pairing -----------------------------------------------------------------------

  async startSeek(preset) {
    this.cancelSeek();
    const mine = { preset, id: null, timer: 0, feed: null, since: Date.now() };
    this.seek = mine;
    this.renderSeek();
    try {
      const seek = await this.matches.seek({ mode: "race", preset, no_guess: this.noGuessBox.checked });
      if (this.seek !== mine) {
        this.matches.cancelSeek(seek.id).catch(() => {});
        return;
      }
      mine.id = seek.id;
      if (seek.status === "waiting") this.listen(mine);
      this.follow(mine, seek);
    } catch (err) {
      if (this.seek === mine) this.end(mine);
      if (err.code === "already_playing") {
        this.renderSeek(playingElsewhere(err));
        this.offerReturn(this.seekStatus, err);
      } else {
        this.renderSeek(`Could not look for an opponent: ${err.message}`);
      }
    }
  }

  /** The pairing comes on the player's socket the moment it happens. */
  listen(mine) {
    mine.feed = new PlayerFeed({
      url: () => this.matches.playerEventsUrl(),
      token: () => this.matches.token(),
      onMatched: (matchId) => this.follow(mine, { status: "matched", match_id: matchId }),
    });
    mine.feed.start();
  }

  /** The search is over: no more polling or listening. */
  end(mine) {
    if (this.seek === mine) this.seek = null;
    this.timers.clearTimeout(mine.timer);
    mine.feed?.stop();
  }

  follow(mine, seek) {
    if (this.seek !== mine) return;
    if (seek.status === "matched" && seek.match_id) {
      this.end(mine);
      this.dialog.close();
      this.openMatch(seek.match_id);
      return;
    }
    if (seek.status !== "waiting") {
      this.end(mine);
      this.renderSeek("Nobody was found in time. Try again?");
      return;
    }
    this.renderSeek();
    // Polling keeps the seek alive too (it expires 30 s after its player stops asking and
    // has no socket open), and tells of a pairing the socket missed (it was down).
    mine.timer = this.timers.setTimeout(async () => {
      try {
        this.follow(mine, await this.matches.seekStatus(mine.id));
      } catch (err) {
        if (this.seek !== mine) return;
        this.end(mine);
        this.renderSeek(`Lost track of the search: ${err.message}`);
      }
    }, POLL_MS);
  }

  cancelSeek() {
    const s = this.seek;
    if (!s) return;
    this.end(s);
    if (s.id) this.matches.cancelSeek(s.id).catch(() => {});
    this.renderSeek("Stopped looking.");
  }

  renderSeek(message = "") {
    const s = this.seek;
    for (const b of this.seekButtons) b.setAttribute("aria-pressed", String(Boolean(s && s.preset === b.dataset.seek)));
    this.cancelButton.hidden = !s;
    // Written only when it changes: a status rewritten on every poll is said again.
    const text = s ? `Looking for an opponent on ${LABEL[s.preset]}…` : message;
    if (this.seekStatus.textContent !== text) this.seekStatus.textContent = text;
  }

  // ---- private rooms -----------------------------------------------------------------------

  async createRoom() {
    const settings = { mode: this.mode.value, preset: this.preset.value, seats: Number(this.seats.value), no_guess: this.noGuessBox.checked };
    this.roomStatus.textContent = "Making the room…";
    try {
      const view = await this.matches.create(settings);
      this.dialog.close();
      this.openMatch(view.id, view);
    } catch (err) {
      if (err.code === "already_playing") {
        this.roomStatus.textContent = playingElsewhere(err);
        this.offerReturn(this.roomStatus, err);
      } else {
        this.roomStatus.textContent = `Could not make the room: ${err.message}`;
      }
    }
  }

  /** A player in another match may go back to it from here. */
  offerReturn(where, err) {
    const id = err.problem?.match_id;
    if (!id) return;
    const back = el("button", { type: "button", textContent: "Go back to it" });
    back.addEventListener("click", () => {
      this.dialog.close();
      this.openMatch(id);
    });
    where.append(" ", back);
  }
}
