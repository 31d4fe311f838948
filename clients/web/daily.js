// The Daily menu in the top bar: a disclosure listing today's board of each preset. It
// owns its open state and its keys (arrows, Home/End, Escape); choosing a board hands
// the preset to `onChoose`.

const NOTE = {
  classic: "Today's board: the same mines for everyone, its start already open. The clock starts at your first move.",
  noGuess: "Today's no-guess board: the same mines for everyone, its start already open. The clock starts at your first move.",
};

export class DailyMenu {
  /** `wrap` holds the button and the menu; `noGuess()` says which boards are offered. */
  constructor(wrap, { noGuess, onChoose }) {
    this.wrap = wrap;
    this.button = wrap.querySelector("#daily-button");
    this.menu = wrap.querySelector("#daily-menu");
    this.note = wrap.querySelector("#daily-note");
    this.noGuess = noGuess;
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
    this.note.textContent = this.noGuess() ? NOTE.noGuess : NOTE.classic;
    this.menu.hidden = false;
    this.button.setAttribute("aria-expanded", "true");
    this.menu.querySelector("button").focus();
  }

  close({ focus = false } = {}) {
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
