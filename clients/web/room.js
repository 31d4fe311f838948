// A match's page, #/match/<id>: the waiting room (seats with names and ratings, the share
// link, Join, Start for the creator, Leave), the countdown to starts_at on the server's
// clock, then the race strip over the board (every seat's name, rating and progress, the
// penalties as they happen) and, at the end, the result table with places, times,
// penalties, rating changes and every seat's replay; under it "Rematch" for its players
// (the same match again: the first to ask makes it, the others are asked to join it) and
// "Watch the rematch" for everybody else. The board itself is the page's game screen,
// playing this browser's seat's game with the player token (co-op: the shared game, with
// the teammates' cursors from coop.js). What the page shows is `body[data-match]`.

import { formatTime } from "./format.js";
import {
  BBBV_NOTE, bbbvWords, canJoin, canStart, countsBbbv, clockWords, endWords, limitWords, MatchFeed, matchUrl, msLeft, newPenalties, overWords, PENALTY_S,
  playingElsewhere, playingWords, rematchAsker, rivalNews, replayOutcome, rematchNote, rematchOffer, rematchRefusal, rematchShut, resultRows, seatOf, untoldMines,
  neverPlayed, seatOutcome, seatRows, seatsWords, secondsLeft, stage, stillRacing, WARN_S, awayWords,
} from "./match.js";
import { CoopCursors } from "./coop.js";
import { canShare, copyField, SELECT_TO_COPY, shareSheet } from "./share.js";
import { tokens } from "./storage.js";

const LABEL = { beginner: "Beginner", intermediate: "Intermediate", expert: "Expert" };
const SEAT_STATUS = { waiting: "", playing: "", won: "Cleared", lost: "Lost", resigned: "Resigned" };
const INVITE_ONLY = "Rematch of the last match: only its players can join.";
const REMATCH_BUTTON = { ask: "Rematch", join: "Join the rematch", go: "Go to the rematch" };

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/** A seat without a place: a dash to the eye, and words to a screen reader. */
function unplaced() {
  const dash = el("span", { textContent: "—" });
  dash.setAttribute("aria-hidden", "true");
  return [dash, el("span", { className: "visually-hidden", textContent: "Did not place" })];
}

/** The board settings in words: "Beginner, no guessing, rated, a mine costs 5 s, time limit 10 min". */
export function settingsText(view) {
  const board = view.preset ? LABEL[view.preset] || view.preset : `${view.width}×${view.height}, ${view.mines} mines`;
  const parts = [board];
  if (view.no_guess) parts.push("no guessing");
  if (view.mode === "race") parts.push(view.rated ? "rated" : "unrated");
  parts.push(view.on_mine === "penalty" ? `a mine costs ${PENALTY_S} s` : "a mine ends your game");
  if (view.time_limit_s) parts.push(`time limit ${limitWords(view.time_limit_s)}`);
  return parts.join(", ");
}

export class Room {
  /**
   * `matches`: a MatchApi; `me`: this browser's player (player.js); `screen`: the game
   * screen; `clock`: the server's clock; `onReplay(gameId)`: open a replay;
   * `onMatch(matchId)`: go to another match's page (its address, as an invite link would).
   */
  constructor({ matches, me, screen, clock, notices, onReplay, onMatch }) {
    Object.assign(this, { matches, me, screen, clock, notices, onReplay, onMatch });
    this.id = null;
    this.view = null;
    // The rematch of a finished match: the seat that asked (from its update) and its view
    // (fetched once it is named); a refusal in words, and whether it shut this player out.
    this.rematchState = null;
    this.problem = "";
    this.shut = false;
    // The next match's view, as the rematch endpoint answered it, shown at once when its
    // page opens; and the match whose page takes the focus when it shows.
    this.handoff = null;
    this.landing = null;
    this.feed = null;
    this.gameShown = null;
    this.ticker = 0;
    this.busy = false;
    // The stage last drawn (the countdown's end fits the board), whether the board takes
    // the keyboard focus once it shows (play began), and whether the end's warning was said.
    this.lastShown = null;
    this.focusBoard = false;
    // The latest news of the other seats (one cleared, hit a mine, resigned), and this
    // player's seat's status when it came: { text, mine }.
    this.news = null;
    this.warned = false;
    // Co-op: the mines this player opened that the team's count has not taken in yet.
    this.ownMines = 0;
    // How many seats each room has: the match's view does not say.
    // A rematch's players (the match before it's), once learnt: { id, players }.
    this.invited = null;
    this.build();
    this.cursors = new CoopCursors({
      board: document.getElementById("board"),
      screen,
      send: (x, y) => this.feed?.cursor(x, y),
      nameOf: (id) => this.view?.seats.find((s) => s.player.id === id)?.player.name ?? "Teammate",
    });
  }

  get active() {
    return this.id != null;
  }

  /**
   * A co-op move (`diff.by`) on the game on screen: a teammate's is shown at its cell; a
   * mine this player opened is kept, for the team's count of mines to tell it apart.
   */
  moved(c, diff, count) {
    if (!this.holds(c.id)) return;
    if (diff.by !== this.me.id) return this.cursors.moved(diff, count);
    const i = seatOf(this.view, this.me.id);
    if (i >= 0) this.ownMines = untoldMines(this.ownMines, diff, c.game, this.view.seats[i].penalties);
  }

  /** Whether game `id` is this match's board (its address stays the match's). */
  holds(id) {
    return this.active && this.gameShown === id;
  }

  build() {
    const s = (this.section = el("section", { id: "match", className: "match", hidden: true }));
    s.setAttribute("aria-labelledby", "match-title");
    this.title = el("h2", { id: "match-title", className: "match-title" });
    this.settings = el("p", { className: "match-settings", id: "match-settings" });
    this.status = el("p", { className: "match-status", id: "match-status", role: "status", tabIndex: -1 });
    this.status.setAttribute("aria-live", "polite");
    this.countdown = el("p", { className: "match-countdown", id: "match-countdown", hidden: true });
    this.countdown.setAttribute("aria-hidden", "true"); // the status says it once, not every second
    // The time left during play: a timer is not a live region, so it is not read out every
    // second; shortly before the end the page says so once.
    this.timeLeft = el("p", { className: "match-clock", id: "match-clock", role: "timer", hidden: true });
    this.shareUrl = el("input", { type: "text", readOnly: true, id: "match-url" });
    const copy = el("button", { type: "button", id: "match-copy", textContent: "Copy link" });
    copy.addEventListener("click", () => this.copy());
    // Where the browser has a share sheet (a phone), it is the first way to send the link.
    const send = el("button", { type: "button", id: "match-send", className: "primary", textContent: "Share link" });
    send.hidden = !canShare({ url: location.href });
    send.addEventListener("click", () => this.send());
    // What became of the link, said where it is (the game's notes are hidden in the room).
    this.shareStatus = el("p", { className: "match-share-status", id: "match-share-status", role: "status" });
    this.share = el("div", { className: "match-share", id: "match-share" },
      el("label", { htmlFor: "match-url", textContent: "Invite with this link:" }), this.shareUrl, send, copy, this.shareStatus);
    // A rematch's room takes only the last match's players: nobody is invited to it.
    this.inviteOnly = el("p", { className: "match-invite-only", id: "match-invite-only", hidden: true, textContent: INVITE_ONLY });
    this.joinButton = this.action("match-join", "Take a seat", () => this.act("join"), "primary");
    this.startButton = this.action("match-start", "Start", () => this.act("start"), "primary");
    this.leaveButton = this.action("match-leave", "Leave", () => this.leave());
    this.actions = el("div", { className: "match-actions" }, this.joinButton, this.startButton, this.leaveButton);
    this.seats = el("ol", { className: "match-seats", id: "match-seats" });
    this.seats.setAttribute("aria-label", "Players");
    this.results = el("div", { className: "match-results", id: "match-results", hidden: true });
    // Under the result: the same match again. The button stays focusable while it asks
    // (aria-disabled), so a refusal is read where the player is.
    this.rematchButton = this.action("match-rematch", "Rematch", () => this.rematch(), "primary");
    this.watchRematch = el("a", { id: "match-rematch-watch", textContent: "Watch the rematch", hidden: true });
    this.watchRematch.addEventListener("click", (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
      this.landing = this.view?.rematch_id ?? null;
    });
    this.rematchBox = el("div", { className: "match-rematch", id: "match-rematch-box", hidden: true }, this.rematchButton, this.watchRematch);
    s.append(this.title, this.settings, this.status, this.timeLeft, this.countdown, this.share, this.inviteOnly, this.actions,
      this.seats, this.results, this.rematchBox);
    const game = document.getElementById("game");
    game.parentElement.insertBefore(s, game);
    this.buildResign();
    this.buildAway();
  }

  /**
   * Another game started while this player still races is asked first: it resigns
   * nothing, and the race goes on without them (they can come back to its page).
   */
  buildAway() {
    const d = (this.awayDialog = el("dialog", { id: "away-dialog", className: "away-dialog" }));
    d.setAttribute("aria-labelledby", "away-title");
    d.setAttribute("aria-describedby", "away-text");
    this.awayTitle = el("h2", { id: "away-title" });
    this.awayText = el("p", { id: "away-text" });
    // The safe answer has the focus: Enter or Escape keeps racing.
    const stay = el("button", { type: "button", id: "away-stay", className: "primary", textContent: "Keep racing", autofocus: true });
    const go = el("button", { type: "button", id: "away-go", textContent: "Start the new game" });
    this.awayAnswer = null;
    const answer = (yes) => {
      const done = this.awayAnswer;
      this.awayAnswer = null;
      if (d.open) d.close();
      done?.(yes);
    };
    stay.addEventListener("click", () => answer(false));
    go.addEventListener("click", () => answer(true));
    d.addEventListener("close", () => answer(false));
    this.awayStay = stay;
    d.append(this.awayTitle, this.awayText, el("div", { className: "dialog-actions" }, stay, go));
    document.body.append(d);
  }

  /**
   * Whether another game may take the screen now: at once when this player does not race
   * here (no match, or their seat is done); else once they said so. Answers a promise.
   */
  mayLeave() {
    const v = this.view;
    if (!this.active || !v || !stillRacing(v, this.me.id)) return Promise.resolve(true);
    if (this.awayAnswer) return Promise.resolve(false); // asked already
    const words = awayWords(v);
    this.awayTitle.textContent = words.title;
    this.awayText.textContent = words.text;
    this.awayStay.textContent = v.mode === "race" ? "Keep racing" : "Keep playing";
    return new Promise((resolve) => {
      this.awayAnswer = resolve;
      this.awayDialog.showModal();
    });
  }

  /** Resigning a started match is asked once more: one stray click must not end a rated race. */
  buildResign() {
    const d = (this.resignDialog = el("dialog", { id: "resign-dialog", className: "resign-dialog" }));
    d.setAttribute("aria-labelledby", "resign-title");
    d.setAttribute("aria-describedby", "resign-text");
    this.resignTitle = el("h2", { id: "resign-title", textContent: "Resign?" });
    this.resignText = el("p", { id: "resign-text" });
    // The safe answer has the focus: Enter or Escape keeps playing.
    const keep = el("button", { type: "button", id: "resign-keep", className: "primary", textContent: "Keep playing", autofocus: true });
    const confirm = el("button", { type: "button", id: "resign-confirm", className: "danger", textContent: "Resign" });
    keep.addEventListener("click", () => d.close());
    confirm.addEventListener("click", () => {
      d.close();
      this.act("leave");
    });
    d.append(this.resignTitle, this.resignText, el("div", { className: "dialog-actions" }, keep, confirm));
    document.body.append(d);
  }

  /** "Leave" gives the seat back before the start; "Resign", after it, is confirmed first. */
  leave() {
    const v = this.view;
    if (this.busy || !v) return;
    if (v.status === "waiting") return this.act("leave");
    const race = v.mode === "race";
    this.resignTitle.textContent = race ? "Resign this race?" : "Resign from this match?";
    this.resignText.textContent = race
      ? `Your board stops for good and you take the last place${v.rated ? ", which counts for your rating" : ""}.`
      : "You stop playing; the team plays on without you.";
    this.resignDialog.showModal();
  }

  action(id, text, run, kind = "") {
    const b = el("button", { type: "button", id, textContent: text, className: kind });
    b.addEventListener("click", run);
    return b;
  }

  // ---- opening and closing -------------------------------------------------------------------

  async open(id) {
    if (this.id === id) return;
    this.close();
    this.id = id;
    if (this.landing !== id) this.landing = this.handoff = null; // reached some other way
    this.section.hidden = false;
    document.body.dataset.match = "loading";
    this.title.textContent = "Match";
    this.status.textContent = "Loading the match…";
    await this.me.ready();
    if (this.id !== id) return;
    this.feed = new MatchFeed({
      url: (since) => this.matches.eventsUrl(id, since),
      token: () => this.me.token(),
      clock: this.clock,
      onView: (view, info) => this.take(view, info),
      onCursor: (c) => this.cursors.show(c),
    });
    this.feed.start();
    const handed = this.handoff?.id === id ? this.handoff : null;
    this.handoff = null;
    if (handed) return this.take(handed, { before: null });
    try {
      const view = await this.matches.get(id);
      if (this.id === id && !this.view) this.take(view, { before: null });
    } catch (err) {
      if (this.id !== id) return;
      this.status.textContent = err.status === 404 ? "There is no such match (matches are kept for a while after they end)." : `Could not load the match: ${err.message}`;
    }
  }

  /** Go to match `id`'s page, its status (or its Start button) taking the focus there. */
  goTo(id, view = null) {
    this.handoff = view;
    this.landing = id;
    this.onMatch(id);
  }

  /** The match's page has shown: the focus goes where the next step is. */
  land() {
    this.landing = null;
    const start = this.startButton;
    (!start.hidden && !start.disabled ? start : this.status).focus();
  }

  /**
   * The browser went offline: the match's socket may look open for a long while yet,
   * hearing nothing, so it is let go now; it dials again from the version held, and
   * catches up at once when the network is back (`wake`).
   */
  offline() {
    this.feed?.lose();
  }

  /** The network came back, or the page is shown again: the feed catches up now. */
  wake() {
    this.feed?.wake();
  }

  close() {
    if (!this.active) return;
    this.feed?.stop();
    this.feed = null;
    this.cursors.stop();
    clearInterval(this.ticker);
    this.ticker = 0;
    this.id = this.view = this.gameShown = this.rematchState = this.lastShown = this.news = null;
    this.notices.drop("penalty");
    this.problem = "";
    this.shareStatus.textContent = "";
    this.shut = this.focusBoard = this.warned = false;
    this.ownMines = 0;
    if (this.resignDialog.open) this.resignDialog.close();
    if (this.awayDialog.open) this.awayDialog.close();
    this.section.hidden = true;
    this.screen.showMatchLevel(null);
    delete document.body.dataset.match;
    delete document.body.dataset.matchSeat;
  }

  // ---- what arrives --------------------------------------------------------------------------

  take(view, { before, change = null, seat = null }) {
    if (view.id !== this.id) return;
    if (this.view && view.version < this.view.version) return;
    this.clock.sampleText(view.server_time);
    this.view = view;
    if (view.rematch_id) this.followRematch(view.rematch_id, change === "rematch" ? seat : null);
    const news = rivalNews(before, view, this.me.id);
    if (news) this.news = { text: news, mine: this.mySeatStatus() };
    // A rival's mines show in their row; a notice and words for each of them drowned the
    // player's own game. The player's own mine is said by the move ("exploded mine"):
    // its cost is only shown, the latest one, and not past the board's end.
    // Co-op's penalties are the team's, counted on every seat: a teammate's mine is said
    // by nothing else, and this player's own by the move, as in a race.
    const coop = view.mode === "coop";
    for (const p of newPenalties(before, view, this.me.id)) {
      if (!p.you || view.status === "finished") continue;
      const own = coop ? Math.min(this.ownMines, p.count) : p.count;
      if (coop) this.ownMines -= own;
      const cost = `+${p.count * PENALTY_S} s`;
      this.notices.toast(coop ? `The team opened a mine: ${cost}.` : `You opened a mine: ${cost}.`, {
        kind: "error", key: "penalty", quiet: own === p.count, timeout: 4000, about: this.gameShown, untilEnd: true,
      });
    }
    if (view.status === "finished") this.notices.drop("penalty");
    if (view.status === "waiting" && view.rematch_of) this.learnInvited(view);
    this.showBoard();
    this.render();
    // The panel under the board says how this seat's game ended, as the match tells it.
    const c = this.screen.current;
    if (c && this.holds(c.id) && c.game.finished) this.screen.render();
    if (this.landing === view.id) this.land();
  }

  /** This browser's seat's status, or null without a seat. */
  mySeatStatus() {
    const i = seatOf(this.view, this.me.id);
    return i >= 0 ? this.view.seats[i].status : null;
  }

  /**
   * A rematch is for the players of the match it follows, as many seats as they were:
   * learnt from that match, so that nobody else is offered a seat.
   */
  async learnInvited(view) {
    if (this.invited?.id === view.id) return;
    const invited = (this.invited = { id: view.id, players: null });
    try {
      const before = await this.matches.get(view.rematch_of);
      invited.players = new Set(before.seats.map((s) => s.player.id));
      if (this.id === view.id && this.view) this.render();
    } catch {
      // The page says the seats taken only, and the service refuses whom it must.
    }
  }

  /** Whether this player may sit down here: a rematch's room is its players' only. */
  invitedHere(v) {
    const players = this.invited?.id === v.id ? this.invited.players : null;
    return !v.rematch_of || !players || players.has(this.me.id);
  }

  /** How the match ended for game `c` (its board on screen), for the panel under it; or null. */
  endWords(c) {
    if (!this.holds(c?.id) || !this.view) return null;
    return endWords(this.view, this.me.id, c.game);
  }

  /** The finished match names its rematch: who asked, and whether this player sits in it. */
  async followRematch(rematchId, seat) {
    let r = this.rematchState;
    if (!r || r.id !== rematchId) r = this.rematchState = { id: rematchId, seat: null, view: null, asked: false, known: false };
    if (seat != null) r.seat = seat;
    if (r.asked) return;
    r.asked = true;
    try {
      const view = await this.matches.get(rematchId);
      if (this.rematchState === r) r.view = view;
    } catch {
      // Who asked is not known then: the page says a rematch was asked for.
    }
    if (this.rematchState !== r) return;
    r.known = true;
    if (this.view) this.render();
  }

  /** "Rematch" or "Join the rematch": ask the service, then go to the rematch's page. */
  async rematch() {
    if (this.busy || !this.view) return;
    const id = this.id;
    const offer = rematchOffer(this.view, this.me.id, { rematch: this.rematchState?.view });
    if (offer.action === "go") return this.goTo(offer.id);
    this.busy = true;
    this.problem = "";
    this.render();
    let refused = false;
    try {
      const next = await this.matches.rematch(id);
      if (this.id === id) this.goTo(next.id, next);
    } catch (err) {
      if (this.id !== id) return;
      refused = true;
      this.problem = rematchRefusal(err);
      this.shut = rematchShut(err);
    } finally {
      this.busy = false;
      if (this.id === id) this.render();
    }
    // Refused for good: the link to watch it stands where the button was.
    if (refused && this.rematchButton.hidden && !this.watchRematch.hidden) this.watchRematch.focus();
  }

  /** Put this browser's seat's game (co-op: the shared one) on the board, once it exists. */
  async showBoard() {
    const v = this.view;
    const st = stage(v, this.me.id);
    if (!st.gameId || v.status === "waiting" || this.gameShown === st.gameId) return;
    this.gameShown = st.gameId;
    const token = st.play ? await this.me.token() : null;
    if (token) tokens.set(st.gameId, token); // a match's game takes its seat's player token
    if (this.gameShown !== st.gameId) return;
    await this.screen.open(st.gameId, token ? "play" : "watch", { match: v.mode, matchId: v.id });
    this.cursors.follow(v.mode === "coop" && st.play ? st.gameId : null);
    if (this.view) this.render();
  }

  /**
   * A seat that resigned moves no more, though its game goes on until the match ends it:
   * on the page its clock stops and its board takes no moves (the page says why).
   */
  stopResigned() {
    const v = this.view;
    const i = seatOf(v, this.me.id);
    const c = this.screen.current;
    const resigned = i >= 0 && v.seats[i].status === "resigned" && v.status !== "finished";
    if (resigned) document.body.dataset.matchSeat = "resigned";
    else delete document.body.dataset.matchSeat;
    if (!resigned || !c || !this.holds(c.id) || c.mode !== "play" || c.game.finished || c.game.haltedMs != null) return;
    c.game.halt(this.clock.now());
    this.screen.board.show(c.game, { readonly: true, label: "Minefield (you resigned)" });
    this.screen.render();
  }

  /** Play has begun: the board takes the keyboard focus, unless the player put it somewhere. */
  takeFocus() {
    const c = this.screen.current;
    if (!this.focusBoard || !c || !this.holds(c.id) || c.mode !== "play" || this.shown() !== "playing") return;
    this.focusBoard = false;
    const at = document.activeElement;
    const astray = !at || at === document.body || !at.isConnected || Boolean(at.closest("[hidden]"))
      || this.section.contains(at) || at.id === "online-button";
    // The teammates see where a player points: not where the page put the focus.
    if (astray) this.cursors.quietly(() => this.screen.board.focus());
  }

  async act(what) {
    if (this.busy || !this.id) return;
    const id = this.id;
    this.busy = true;
    this.render();
    let done = false;
    try {
      const view = await this.matches[what](id);
      if (this.id !== id) return;
      done = true;
      if (view && view.id) this.take(view, { before: this.view });
      await this.feed?.reauth(); // the socket learns the seat: its updates carry our game
    } catch (err) {
      if (this.id === id) this.notices.toast(refusal(what, err), { kind: "error" });
    } finally {
      this.busy = false;
      if (this.id === id) this.render();
    }
    // The button pressed is gone (Take a seat, Start, Resign): the status, which says
    // what happened and what comes next, takes the focus rather than the page.
    if (done && this.id === id) {
      const at = document.activeElement;
      if (!at || at === document.body || !at.isConnected || at.closest("[hidden]") || at.closest("dialog:not([open])")) this.status.focus();
    }
  }

  /** "Copy link": copied, or (no clipboard: a page over plain HTTP) selected, and said so. */
  async copy() {
    const copied = await copyField(this.shareUrl);
    this.tellShare(copied ? "Link copied." : SELECT_TO_COPY);
  }

  /** "Share link": the system's share sheet; a copy when it fails (not when closed). */
  async send() {
    const v = this.view;
    const what = v?.mode === "coop" ? "co-op game" : "race";
    const data = { title: "Minesweeper", text: `Join my Minesweeper ${what}`, url: this.shareUrl.value };
    const how = await shareSheet(data);
    if (how === "none") await this.copy();
    else this.tellShare(how === "shared" ? "Link shared." : "");
  }

  /** Say under the link what became of it; said again when it is pressed again. */
  tellShare(text) {
    this.shareStatus.textContent = "";
    if (text) requestAnimationFrame(() => { this.shareStatus.textContent = text; });
  }

  // ---- rendering -----------------------------------------------------------------------------

  /** The stage shown: the countdown ends on the server's clock, not when an update comes. */
  shown() {
    const v = this.view;
    if (v.status !== "countdown") return v.status;
    const starts = Date.parse(v.starts_at);
    return secondsLeft(starts, this.clock.now()) > 0 ? "countdown" : "playing";
  }

  render() {
    const v = this.view;
    if (!v) return;
    const meId = this.me.id;
    const shown = this.shown();
    const seated = seatOf(v, meId) >= 0;
    const focused = this.section.contains(document.activeElement) ? document.activeElement : null;
    const was = this.lastShown;
    this.lastShown = shown;
    document.body.dataset.match = shown;
    document.body.dataset.matchMode = v.mode;
    // A race watched by somebody without a seat has no board to show until the end.
    document.body.dataset.matchBoard = this.gameShown ? "shown" : "none";
    this.title.textContent = `${v.mode === "coop" ? "Co-op" : "Race"}${v.status === "finished" ? ": result" : ""}`;
    this.settings.textContent = settingsText(v);
    this.screen.showMatchLevel(v.preset && LABEL[v.preset] ? v.preset : "custom");
    this.renderStatus(shown, seated);
    // A rematch's room takes only the last match's players: it says so instead of inviting.
    this.share.hidden = v.status !== "waiting" || Boolean(v.rematch_of);
    this.inviteOnly.hidden = v.status !== "waiting" || !v.rematch_of;
    this.shareUrl.value = matchUrl(v.id, location);
    this.joinButton.hidden = !canJoin(v, meId) || !this.invitedHere(v);
    this.startButton.hidden = !(v.status === "waiting" && seatOf(v, meId) === 0);
    this.startButton.disabled = this.busy || !canStart(v, meId);
    this.startButton.title = canStart(v, meId) ? "Start the match with the players seated now" : "Two players are needed to start";
    // Before the start a seat is given back; after it, a seat still playing resigns.
    const mine = seated ? v.seats[seatOf(v, meId)] : null;
    this.leaveButton.hidden = !mine || !(v.status === "waiting" || mine.status === "playing");
    this.leaveButton.textContent = v.status === "waiting" ? "Leave" : "Resign";
    this.joinButton.disabled = this.leaveButton.disabled = this.busy;
    if (this.leaveButton.hidden && this.resignDialog.open) this.resignDialog.close();
    // The race ended (or the seat did) while the page asked about leaving it: nothing to ask.
    if (this.awayDialog.open && !stillRacing(v, meId)) this.awayDialog.close();
    this.renderSeats(shown);
    this.renderResults();
    this.renderRematch();
    this.tick(shown, was);
    if (shown === "finished" && was && was !== "finished") this.bringResultIntoView();
    this.stopResigned();
    // What had the focus went with the stage (the share link once the room is full, a
    // result drawn anew): the status, which says what happens now, takes it, not the page.
    if (focused && (!focused.isConnected || focused.closest("[hidden]"))) this.status.focus();
    this.takeFocus();
    // Nobody points at an ended match's board any more: the teammates' pointers go.
    if (v.status === "finished") this.cursors.stop();
    else this.cursors.placeAll();
  }

  /**
   * The match has just ended: its result (heading, places) comes into the window when the
   * page was scrolled past it to the board (a short window), once the board has refitted.
   */
  bringResultIntoView() {
    const id = this.id;
    requestAnimationFrame(() => requestAnimationFrame(() => {
      if (this.id !== id || this.section.hidden) return;
      if (this.section.getBoundingClientRect().top < 0) this.section.scrollIntoView({ block: "start" });
    }));
  }

  renderStatus(shown, seated) {
    const v = this.view;
    let text;
    let heard = "";
    if (shown === "waiting") {
      const n = v.seats.length;
      const who = seatsWords(n, v.capacity);
      if (!seated) text = !this.invitedHere(v) ? `${who}. Only the last match's players can take a seat; you can watch.` : `${who}. Take a seat to play.`;
      else if (seatOf(v, this.me.id) === 0) {
        const others = v.rematch_of ? "start once another player is in" : "share the link; start once somebody joins";
        // Two are enough to start: a free seat is a choice to wait, not a reason to.
        text = n >= 2 ? `${who}. Start now, or wait for more players.` : `${who}. ${others[0].toUpperCase()}${others.slice(1)}.`;
      } else text = `${who}. Waiting for ${v.seats[0].player.name} to start.`;
    } else if (shown === "countdown") {
      // Said once (a live region): the big counter beside it counts the seconds down.
      text = "Get ready: the match starts when the countdown ends.";
      // The big counter is not read out: the seconds are said once, to screen readers
      // only, as the words in view would go stale.
      // Rounded, not ceiled like the counter: the clock's estimate of the server's
      // lags by some milliseconds, which made a 3 s countdown "4 seconds".
      const n = Math.max(1, Math.round((Date.parse(v.starts_at) - this.clock.now()) / 1000));
      heard = ` It starts in ${n} ${n === 1 ? "second" : "seconds"}.`;
    } else if (shown === "playing") {
      // The latest rival's end comes first, said once by the status (a live region), until
      // the player's own seat has news of its own.
      const news = this.news && this.news.mine === this.mySeatStatus() ? `${this.news.text} ` : "";
      text = `${news}${playingWords(v, this.me.id)}`;
    } else {
      // A live region: how the race ended for this player, said once, and nowhere else.
      text = `${overWords(v, this.me.id)}${this.rematchText()}`;
    }
    if (this.status.textContent !== text + heard && !(shown === "countdown" && this.status.dataset.shown === "countdown")) {
      this.status.replaceChildren(text, ...(heard ? [el("span", { className: "visually-hidden", textContent: heard })] : []));
    }
    this.status.dataset.shown = shown;
  }

  renderSeats(shown) {
    const v = this.view;
    const racing = shown !== "waiting" && shown !== "countdown";
    const items = seatRows(v, this.me.id).map((r) => {
      const li = el("li", { className: `match-seat${r.you ? " match-you" : ""}` });
      li.dataset.seat = String(r.index);
      li.dataset.status = r.status;
      // The whole name, wrapped if it must (cut short above a phone's board, whole in its
      // tooltip): "(you)" is never cut off with it.
      const name = el("span", { className: "seat-name" }, el("span", { className: "seat-player", textContent: r.name, title: r.name }));
      if (r.you) name.append(el("span", { className: "seat-you", textContent: " (you)" }));
      const rating = el("span", { className: "seat-rating" });
      if (v.mode === "race") rating.append(el("span", { className: "visually-hidden", textContent: "rating " }), r.rating);
      li.append(name, rating);
      if (racing && v.mode === "race") {
        const bar = el("div", { className: "seat-bar", role: "progressbar" });
        bar.setAttribute("aria-label", `${r.name}'s progress`);
        bar.setAttribute("aria-valuemin", "0");
        bar.setAttribute("aria-valuemax", String(r.total));
        bar.setAttribute("aria-valuenow", String(r.done));
        bar.setAttribute("aria-valuetext", `${r.done} of ${r.total}`);
        bar.append(el("span", { className: "seat-fill" }));
        bar.firstChild.style.width = `${(r.share * 100).toFixed(1)}%`;
        li.append(bar, el("span", { className: "seat-count", textContent: `${r.done}/${r.total}` }));
      }
      // Co-op's penalties are the team's: said once, not on every teammate's row.
      if (r.penalties && (v.mode === "race" || r.index === 0)) {
        const whose = v.mode === "coop" ? "Team: " : "";
        li.append(el("span", { className: "seat-penalties", textContent: `${whose}${r.penalties} ${r.penalties === 1 ? "mine" : "mines"} +${r.penalties * PENALTY_S} s` }));
      }
      if (SEAT_STATUS[r.status]) li.append(el("span", { className: "seat-status", textContent: SEAT_STATUS[r.status] }));
      return li;
    });
    this.seats.replaceChildren(...items);
    this.seats.hidden = v.status === "finished";
  }

  renderResults() {
    const v = this.view;
    // A match that never started has no result to show.
    this.results.hidden = v.status !== "finished" || neverPlayed(v);
    if (this.results.hidden) return;
    if (v.mode === "coop") return this.renderTeamResult();
    const head = ["Place", "Player", "Time", "Rating", "Replay"];
    const table = el("table", { className: "match-table" },
      el("caption", { textContent: "Result" }),
      el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col", textContent: h })))));
    const body = el("tbody");
    for (const r of resultRows(v, this.me.id)) {
      const seat = v.seats[r.index];
      const rating = r.change ? `${Math.round(r.after)} (${r.change})` : "—";
      // Each cell says what it is too: on a phone the rows stand as cards, without the head.
      const cell = (label, ...content) => {
        const td = el("td", {}, ...content);
        td.dataset.label = label;
        return td;
      };
      const tr = el("tr", { className: r.you ? "match-you" : "" },
        cell("Place", ...(r.place != null ? [String(r.place)] : unplaced())),
        el("th", { scope: "row" }, el("span", { className: "seat-player", textContent: r.name }), ...(r.you ? [" ", el("span", { className: "seat-you", textContent: "(you)" })] : [])),
        // A card says "Time:" before a time only; "Resigned: 4 of 12 3BV" speaks for itself.
        cell(seat.status === "won" ? "Time" : "", seatOutcome(seat)),
        cell("Rating", rating),
        cell("Replay", this.replayLink(r.gameId, `Replay of ${r.name}'s board`, "Replay", replayOutcome(v, seat))));
      body.append(tr);
    }
    table.append(body);
    this.results.replaceChildren(table, ...this.bbbvNote());
  }

  /** Under a result that counts 3BV: what the word means, once (a newcomer does not know it). */
  bbbvNote() {
    if (!countsBbbv(this.view)) return [];
    return [el("p", { className: "match-note", id: "match-bbbv-note", textContent: BBBV_NOTE })];
  }

  /** Co-op: one board, one time and one count of penalties for the whole team. */
  renderTeamResult() {
    const v = this.view;
    const first = v.seats[0];
    const gameId = v.seats.find((s) => s.game_id)?.game_id ?? null;
    const done = bbbvWords(first.progress);
    // A cleared board's time is said once, by the status above ("together you cleared the
    // board in 6.899 s"): no summary repeats it.
    let summary = "";
    if (v.seats.some((s) => s.status === "won")) {
      // said by the status
    } else if (v.seats.every((s) => s.status === "resigned")) {
      summary = `Everybody resigned, with ${done} done.`;
    } else {
      const seat = v.seats.find((s) => s.status === "lost");
      summary = seat && seat.time_ms != null ? `The team hit a mine, with ${done} done.` : `Out of time: the team did ${done}.`;
    }
    if (first.penalties && !v.seats.some((s) => s.status === "won")) {
      summary += ` Mines opened by the team: ${first.penalties}.`;
    }
    const table = el("table", { className: "match-table match-team" },
      el("caption", { textContent: "The team's result" }),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", textContent: "Player" }), el("th", { scope: "col", textContent: "How it ended" }))));
    const body = el("tbody");
    for (const r of resultRows(v, this.me.id)) {
      const td = el("td", { textContent: r.status === "resigned" ? "Resigned" : "Played to the end" });
      td.dataset.label = "How it ended";
      body.append(el("tr", { className: r.you ? "match-you" : "" },
        el("th", { scope: "row" }, el("span", { className: "seat-player", textContent: r.name }), ...(r.you ? [" ", el("span", { className: "seat-you", textContent: "(you)" })] : [])),
        td));
    }
    table.append(body);
    const replay = this.replayLink(gameId, "Replay of the team's board", "Replay of the team's board", replayOutcome(v, first));
    this.results.replaceChildren(...(summary ? [el("p", { className: "match-summary", id: "match-summary", textContent: summary })] : []), table,
      el("p", { className: "match-team-replay" }, replay), ...this.bbbvNote());
  }

  /** A link to a board's replay (opened on this page), or a dash when there is none. */
  replayLink(gameId, label, text = "Replay", outcome = null) {
    if (!gameId) return el("span", { textContent: "—" });
    const a = el("a", { href: `#/replay/${gameId}`, textContent: text });
    if (text !== label) a.setAttribute("aria-label", label);
    a.addEventListener("click", (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
      e.preventDefault();
      this.onReplay(gameId, outcome);
    });
    return a;
  }

  /** After how the match ended: a refusal, or who asked for the rematch (once known). */
  rematchText() {
    if (this.problem) return ` ${this.problem}`;
    const r = this.rematchState;
    if (!r || r.id !== this.view.rematch_id) return "";
    const asker = rematchAsker(this.view, this.me.id, { seat: r.seat, rematch: r.view });
    if (!asker && !r.known) return ""; // its view is on the way: the name comes with it
    return ` ${rematchNote(asker)}`;
  }

  renderRematch() {
    const r = this.rematchState;
    const offer = rematchOffer(this.view, this.me.id, { rematch: r?.view, shut: this.shut });
    this.rematchBox.hidden = !offer.action;
    this.rematchButton.hidden = !REMATCH_BUTTON[offer.action];
    if (REMATCH_BUTTON[offer.action]) this.rematchButton.textContent = REMATCH_BUTTON[offer.action];
    this.rematchButton.setAttribute("aria-disabled", String(this.busy));
    this.watchRematch.hidden = offer.action !== "watch";
    if (offer.id) this.watchRematch.href = `#/match/${offer.id}`;
  }

  /**
   * The countdown, then the time left, redrawn on the server's clock: the countdown's end
   * shows the board (and gives it the focus), and the time left warns once near the end.
   */
  tick(shown, was) {
    const v = this.view;
    this.countdown.hidden = shown !== "countdown";
    if (shown === "countdown") {
      this.countdown.textContent = String(secondsLeft(Date.parse(v.starts_at), this.clock.now()));
    } else if (was === "countdown" && shown === "playing") {
      // The board was out of the page during the countdown: it is fitted to its room now,
      // and brought into the window if the seats above pushed it out (on a phone).
      this.screen.fit({ force: true });
      this.screen.bringIntoView();
      this.focusBoard = true;
    }
    this.renderTimeLeft(shown);
    const running = shown === "countdown" || (shown === "playing" && !this.timeLeft.hidden);
    if (running && !this.ticker) this.ticker = setInterval(() => this.onTick(), 250);
    else if (!running && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = 0;
    }
  }

  onTick() {
    if (!this.view) return;
    // The countdown redraws the page until play begins; then only the time left changes.
    if (this.shown() !== this.lastShown || this.lastShown === "countdown") this.render();
    else this.renderTimeLeft(this.lastShown);
  }

  /** "Time left 9:58" while the match is played; said once when WARN_S seconds are left. */
  renderTimeLeft(shown) {
    const v = this.view;
    const left = shown === "playing" ? msLeft(Date.parse(v.ends_at), this.clock.now()) : null;
    this.timeLeft.hidden = left == null;
    if (left == null) return;
    const text = `Time left ${clockWords(left)}`;
    if (this.timeLeft.textContent !== text) this.timeLeft.textContent = text;
    const near = left <= WARN_S * 1000;
    this.timeLeft.classList.toggle("near", near);
    if (near && !this.warned && v.time_limit_s > WARN_S) {
      this.warned = true;
      this.notices.announce(`${Math.ceil(left / 1000)} seconds left in the match.`);
    }
  }
}

/** What the page says when the service refuses a join, a start or a leave. */
export function refusal(what, err) {
  switch (err.code) {
    case "match_full":
      return "Every seat is taken.";
    case "match_started":
      return "The match has started without you; you can watch it.";
    case "already_seated":
      return "You have a seat already.";
    case "already_playing":
      return playingElsewhere(err);
    case "forbidden":
      return "This room is a rematch: only the players of the match before it may sit down.";
    default:
      return `Could not ${what === "join" ? "take a seat" : what}: ${err.message}`;
  }
}
