// What the page tells the player besides the board: short notices ("toasts", each with an
// optional action and a close button) and the polite live region that speaks to screen
// readers. Notices show in the notes under the game's controls, the newest on top of the
// others, so none ever covers a control; a notice about a game goes when another game
// comes on screen.

const MAX_TOASTS = 3;

/**
 * Put `text` in `el` unless it says that already: a live region written again with the
 * same text is read out again, as news. To say the same thing twice on purpose (the same
 * hint asked for again), `Notices.announce` speaks it anew.
 */
export function writeText(el, text) {
  if (el.textContent === text) return;
  el.textContent = text;
}

export class Notices {
  constructor(toasts, announcer) {
    this.toasts = toasts;
    this.announcer = announcer;
  }

  /** Say `text` to assistive technology. */
  announce(text) {
    this.announcer.textContent = "";
    // A fresh text node makes repeated messages speak again.
    requestAnimationFrame(() => {
      this.announcer.textContent = text;
    });
  }

  /**
   * A notice: `action` { label, run } adds a button; it goes after `timeout` ms. `about`:
   * the id of the game it is about, if it is about one; `untilEnd`: it also goes when that
   * game ends (the result takes its place). `key`: a name for it, so that it can be taken
   * away (`drop`) and a newer notice of that name replaces it. `quiet`: shown only, for
   * what something else says already (no close button: it goes soon by itself).
   */
  toast(message, { action = null, timeout = 6000, kind = "info", about = null, untilEnd = false, key = null, quiet = false } = {}) {
    if (key) this.drop(key);
    const el = document.createElement("div");
    el.className = `toast ${kind}`;
    // No role of its own: the notes it goes in are the one live region that says it (a
    // region in a region is said twice).
    if (about) el.dataset.about = about;
    if (about && untilEnd) el.dataset.untilEnd = "";
    if (key) el.dataset.key = key;
    if (quiet) el.setAttribute("aria-hidden", "true");
    const text = document.createElement("span");
    text.textContent = message;
    el.append(text);
    let timer = 0;
    const remove = () => {
      clearTimeout(timer);
      el.remove();
    };
    if (action) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = action.label;
      b.addEventListener("click", () => {
        remove();
        action.run();
      });
      el.append(b);
    }
    if (!quiet) {
      const close = document.createElement("button");
      close.type = "button";
      close.className = "toast-close";
      close.setAttribute("aria-label", "Dismiss");
      close.textContent = "×";
      close.addEventListener("click", remove);
      el.append(close);
    }
    this.toasts.prepend(el);
    while (this.toasts.children.length > MAX_TOASTS) this.toasts.lastElementChild.remove();
    timer = setTimeout(remove, timeout);
  }

  /** Take away every notice: something newer (a hint) takes their place. */
  clear() {
    this.toasts.replaceChildren();
  }

  /** Take away the notice named `key`, if it is on show. */
  drop(key) {
    for (const el of [...this.toasts.children]) {
      if (el.dataset.key === key) el.remove();
    }
  }

  /** Game `id` ended: its notices that were only for its play go. */
  ended(id) {
    for (const el of [...this.toasts.children]) {
      if (el.dataset.about === id && "untilEnd" in el.dataset) el.remove();
    }
  }

  /** Take away the notices about any game but `id`. */
  forgetAllBut(id) {
    for (const el of [...this.toasts.children]) {
      if (el.dataset.about && el.dataset.about !== id) el.remove();
    }
  }
}
