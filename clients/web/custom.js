// The Custom… dialog: a board's size and mines, no guessing, the first-click rule and an
// optional seed. It reads and checks what was typed (whole numbers within the fields'
// own bounds, a seed the page can send); what boards the service accepts is the
// service's to say, and its answer is shown in the dialog, which stays open.

const MAX_SEED = 2n ** 64n;

export class CustomDialog {
  /**
   * `start(settings, { onError })`: start a game with these settings (the preferences'
   * options added by the caller); true once it is on screen. `onStarted(remembered,
   * noGuess)`: keep the board (without its seed) as the custom level.
   */
  constructor(dialog, { start, onStarted }) {
    this.dialog = dialog;
    this.form = dialog.querySelector("#custom-form");
    this.error = dialog.querySelector("#custom-error");
    this.startButton = dialog.querySelector("#custom-start");
    this.firstClickNote = dialog.querySelector("#first-click-note");
    this.start = start;
    this.onStarted = onStarted;
    dialog.querySelector("#custom-cancel").addEventListener("click", () => dialog.close());
    this.form.elements.no_guess.addEventListener("change", () => this.syncFirstClick());
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
  }

  /** Open on `board` ({ width, height, mines, first_click }) with no guessing as given. */
  open(board, { noGuess }) {
    const f = this.form.elements;
    f.width.value = board.width;
    f.height.value = board.height;
    f.mines.value = board.mines;
    f.first_click.value = board.first_click || "zero";
    f.seed.value = "";
    f.no_guess.checked = Boolean(noGuess);
    this.syncFirstClick();
    this.error.textContent = "";
    this.dialog.showModal();
  }

  /** No-guess boards always start with an opening. */
  syncFirstClick() {
    const f = this.form.elements;
    const noGuess = f.no_guess.checked;
    f.first_click.disabled = noGuess;
    if (noGuess) f.first_click.value = "zero";
    this.firstClickNote.hidden = !noGuess;
  }

  /** The settings typed, or the error to show. */
  read() {
    const f = this.form.elements;
    const whole = (el) => (/^\s*\d+\s*$/.test(el.value) ? Number(el.value) : NaN);
    const width = whole(f.width);
    const height = whole(f.height);
    const mines = whole(f.mines);
    const least = (el) => Number(el.min);
    if (!(width >= least(f.width) && height >= least(f.height))) {
      return { error: `Width and height are whole numbers, at least ${least(f.width)}.` };
    }
    if (!(mines >= least(f.mines))) return { error: `Mines is a whole number, at least ${least(f.mines)}.` };
    const noGuess = f.no_guess.checked;
    const settings = { width, height, mines, first_click: noGuess ? "zero" : f.first_click.value, no_guess: noGuess };
    const seedText = f.seed.value.trim();
    if (seedText) {
      if (!/^\d{1,20}$/.test(seedText) || BigInt(seedText) >= MAX_SEED) {
        return { error: `The seed is a whole number from 0 to ${MAX_SEED - 1n}.` };
      }
      settings.seed = Number(seedText);
      if (!Number.isSafeInteger(settings.seed)) {
        return { error: `Seeds above ${Number.MAX_SAFE_INTEGER} cannot be sent from this page.` };
      }
    }
    return { settings };
  }

  async submit() {
    const { settings, error } = this.read();
    if (error) {
      this.error.textContent = error;
      return;
    }
    this.error.textContent = "";
    this.startButton.disabled = true;
    const started = await this.start(settings, {
      // The service knows best which boards it can promise: say why, keep the dialog.
      onError: (err) => {
        this.error.textContent = `This board cannot start: ${err.message}`;
      },
    });
    this.startButton.disabled = false;
    if (!started) return;
    const { seed, no_guess: noGuess, ...remembered } = settings;
    this.onStarted(remembered, noGuess);
    this.dialog.close();
  }
}
