// "Indexing 3,470 / 10,000 files": while the server reads the sessions already on disk (after it
// starts, newest first), the Session tab says how far it got instead of "No sessions yet", from
// `/health` `indexing`. Polled every second while indexing runs; silent once it is done.

import { api } from "../lib/page/client.js";
import { h } from "../lib/page/dom.js";

const POLL_MS = 1000;
const COUNT = new Intl.NumberFormat("en-US");

/** Whether `/health` `indexing` says the archive is fully indexed (or says nothing of it). */
export function indexingDone(indexing) {
  return !indexing || (indexing.total != null && indexing.done >= indexing.total);
}

export function indexingText(indexing) {
  if (indexing.total == null) return "Indexing the sessions on disk…";
  return `Indexing ${COUNT.format(indexing.done)} / ${COUNT.format(indexing.total)} files`;
}

export class IndexingNote {
  /** `onDone` runs when indexing this note saw running has finished (the listing is whole). */
  constructor(onDone) {
    this.onDone = onDone;
    this.active = false;
    this.timer = null;
    this.el = h("p", { class: "indexing-note", hidden: true, attrs: { role: "status" } });
  }

  /** Ask the server how far indexing got; resolves once the note shows it. */
  async check() {
    let health;
    try {
      health = await api("/health");
    } catch {
      return; // the connection status covers an unreachable server
    }
    this._show(health?.indexing);
  }

  _show(indexing) {
    clearTimeout(this.timer);
    this.timer = null;
    if (indexingDone(indexing)) {
      this.el.hidden = true;
      if (this.active) {
        this.active = false;
        this.onDone();
      }
      return;
    }
    this.active = true;
    this.el.textContent = indexingText(indexing);
    this.el.hidden = false;
    this.timer = setTimeout(() => this.check(), POLL_MS);
  }
}
