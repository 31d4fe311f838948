// The watch link of a game (#/watch/<id>) and the dialog that shows and copies it.

export function watchUrl(id) {
  return `${location.origin}${location.pathname}#/watch/${id}`;
}

export class ShareDialog {
  constructor(dialog) {
    this.dialog = dialog;
    this.url = dialog.querySelector("#share-url");
    this.status = dialog.querySelector("#share-status");
    dialog.querySelector("#share-copy").addEventListener("click", () => this.copy());
  }

  open(id) {
    this.url.value = watchUrl(id);
    this.status.textContent = "";
    this.dialog.showModal();
    this.url.select();
  }

  async copy() {
    try {
      await navigator.clipboard.writeText(this.url.value);
      this.status.textContent = "Copied.";
    } catch {
      this.url.select();
      const ok = document.execCommand && document.execCommand("copy");
      this.status.textContent = ok ? "Copied." : "Select the link and copy it.";
    }
  }
}
