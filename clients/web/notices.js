// What the page tells the player besides the board: short toasts (at most three, each
// with an optional action and a close button) and the polite live region that speaks to
// screen readers.

const MAX_TOASTS = 3;

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

  /** A toast: `action` { label, run } adds a button; it goes after `timeout` ms. */
  toast(message, { action = null, timeout = 6000, kind = "info" } = {}) {
    const el = document.createElement("div");
    el.className = `toast ${kind}`;
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
    const close = document.createElement("button");
    close.type = "button";
    close.className = "toast-close";
    close.setAttribute("aria-label", "Dismiss");
    close.textContent = "×";
    close.addEventListener("click", remove);
    el.append(close);
    this.toasts.append(el);
    while (this.toasts.children.length > MAX_TOASTS) this.toasts.firstElementChild.remove();
    timer = setTimeout(remove, timeout);
  }
}
