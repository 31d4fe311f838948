// The watch link of a game (#/watch/<id>) and the dialog that shows and copies it; and
// the ways a link leaves the page (also a match's invite link, room.js): the system's
// share sheet where the browser has one, else a copy, else the link selected for the
// player to copy (a page over plain HTTP has no clipboard).

export function watchUrl(id) {
  return `${location.origin}${location.pathname}#/watch/${id}`;
}

/** What the page says when it could only select a link: the player copies it. */
export const SELECT_TO_COPY = "Select the link and copy it.";

/**
 * Copy the link in text field `field`: true once copied; false when the browser let the
 * page copy nothing, the link left selected in the field.
 */
export async function copyField(field, { clipboard = globalThis.navigator?.clipboard, doc = globalThis.document } = {}) {
  try {
    if (!clipboard) throw new Error("no clipboard here");
    await clipboard.writeText(field.value);
    return true;
  } catch {
    field.select();
    try {
      return Boolean(doc?.execCommand && doc.execCommand("copy"));
    } catch {
      return false;
    }
  }
}

/** Whether the browser has a share sheet for `data` (a phone's, mostly). */
export function canShare(data, nav = globalThis.navigator) {
  return typeof nav?.share === "function" && (typeof nav.canShare !== "function" || nav.canShare(data));
}

/**
 * Hand `data` ({ title, text, url }) to the system's share sheet: "shared", "cancelled"
 * (the player closed it), or "none" (no sheet, or it failed: copy the link instead).
 */
export async function shareSheet(data, nav = globalThis.navigator) {
  if (!canShare(data, nav)) return "none";
  try {
    await nav.share(data);
    return "shared";
  } catch (err) {
    return err?.name === "AbortError" ? "cancelled" : "none";
  }
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
    this.status.textContent = (await copyField(this.url)) ? "Copied." : SELECT_TO_COPY;
  }
}
