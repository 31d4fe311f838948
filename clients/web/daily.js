// The Daily menu in the top bar: a disclosure listing today's board of each preset. It
// owns its open state and its keys (arrows, Home/End, Escape); choosing a board hands
// the preset to `onChoose`. A board the player already played today says so, in the menu
// and (see `playedNote`) when it opens again: another go is a game like any other.

import { formatTime } from "./format.js";

const NOTE = {
  classic: "Today's board: the same mines for everyone, its start already open. The clock starts at your first move.",
  noGuess: "Today's no-guess board: the same mines for everyone, its start already open. The clock starts at your first move.",
};

// What another go at a board played today does: the service counts every finished game of
// a player in their stats, but ranks only the first game of a daily board a day (another
// is played on a board already seen).
const AGAIN = "Another go counts in your stats, but only your first game of the day is ranked.";

/**
 * What the player's games of one daily board today came to: `plays` are
 * { won, elapsedMs, assisted }. Null when there are none; else { count, best } (the
 * fastest win's time, null without a win) and `words`: "won in 41.200 s", "best of 3
 * games: 41.200 s", "lost", "3 games, none won".
 */
export function dailyRecord(plays) {
  if (!plays || plays.length === 0) return null;
  const wins = plays.filter((p) => p.won).map((p) => p.elapsedMs);
  const best = wins.length ? Math.min(...wins) : null;
  const count = plays.length;
  let words;
  if (count === 1) words = best != null ? `won in ${formatTime(best)}` : "lost";
  else words = best != null ? `best of ${count} games: ${formatTime(best)}` : `${count} games, none won`;
  return { count, best, words };
}

/**
 * What the page says when a daily board the player played today (`plays`, see
 * `dailyRecord`) opens again, or null. Short enough for the notes under a phone's board.
 */
export function playedNote(plays) {
  const record = dailyRecord(plays);
  return record && `You played this board today: ${record.words}. ${AGAIN}`;
}

export class DailyMenu {
  /**
   * `wrap` holds the button and the menu; `noGuess()` says which boards are offered;
   * `played(noGuess)`: the player's games of today's boards of that kind, by preset
   * (see `dailyRecord`), or {} when they cannot be told.
   */
  constructor(wrap, { noGuess, onChoose, played = async () => ({}) }) {
    this.wrap = wrap;
    this.button = wrap.querySelector("#daily-button");
    this.menu = wrap.querySelector("#daily-menu");
    this.note = wrap.querySelector("#daily-note");
    this.noGuess = noGuess;
    this.played = played;
    this.asked = 0;
    this.button.addEventListener("click", () => (this.menu.hidden ? this.open() : this.close()));
    this.menu.addEventListener("keydown", (e) => this.onKey(e));
    for (const b of this.menu.querySelectorAll("[data-daily]")) {
      b.addEventListener("click", () => {
        // The focus goes back to the button, not to the page, while the board is made.
        this.close({ focus: this.menu.contains(document.activeElement) });
        onChoose(b.dataset.daily);
      });
    }
    wrap.addEventListener("focusout", (e) => {
      if (!e.relatedTarget || !wrap.contains(e.relatedTarget)) this.close();
    });
    document.addEventListener("pointerdown", (e) => {
      if (!wrap.contains(e.target)) this.close();
    });
  }

  open() {
    const noGuess = this.noGuess();
    this.note.textContent = noGuess ? NOTE.noGuess : NOTE.classic;
    this.showPlayed({});
    this.menu.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.menu.querySelector("button").focus();
    const asked = ++this.asked;
    this.played(noGuess)
      .catch(() => ({}))
      .then((plays) => {
        if (asked === this.asked && !this.menu.hidden) this.showPlayed(plays);
      });
  }

  /** Beside each board played today, how it went; under the note, what another go does. */
  showPlayed(plays) {
    let any = false;
    for (const b of this.menu.querySelectorAll("[data-daily]")) {
      b.querySelector(".menu-played")?.remove();
      const record = dailyRecord(plays[b.dataset.daily]);
      if (!record) continue;
      any = true;
      const span = document.createElement("span");
      span.className = "menu-played";
      // The space keeps the board's name and this apart when they are read as one.
      span.textContent = ` played today: ${record.words}`;
      b.append(span);
    }
    const again = this.menu.querySelector(".menu-again");
    if (any && !again) {
      const p = document.createElement("p");
      p.className = "menu-note menu-again";
      p.textContent = AGAIN;
      this.menu.append(p);
    } else if (!any && again) {
      again.remove();
    }
  }

  close({ focus = false } = {}) {
    this.asked++;
    if (this.menu.hidden) return;
    this.menu.hidden = true;
    this.button.setAttribute("aria-expanded", "false");
    if (focus) this.button.focus();
  }

  onKey(e) {
    const items = [...this.menu.querySelectorAll("button")];
    const k = items.indexOf(document.activeElement);
    const to = { ArrowDown: k + 1, ArrowUp: k - 1, Home: 0, End: items.length - 1 }[e.key];
    if (e.key === "Escape") {
      e.preventDefault();
      this.close({ focus: true });
    } else if (to !== undefined) {
      e.preventDefault();
      items[(to + items.length) % items.length].focus();
    }
  }
}
