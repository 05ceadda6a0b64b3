// Notes to the agent of the session shown (docs/api.md, `POST /api/notes`): a composer under
// the timeline, the session's notes with their state (queued → delivered where / cancelled /
// not delivered, why), Cancel on a queued one, and the review being gathered from diff comments
// (review-comments.js), sent as one note. A note goes only from a click; the server refuses one
// for an ended session and the composer says why. Everything from the server is text.

import { ApiError, api } from "../lib/page/client.js";
import { h, setText } from "../lib/page/dom.js";

const WHERE = { PostToolUse: "after a tool call", Stop: "at the end of the turn" };

export function stateText(note) {
  const at = note.settled_at ? ` at ${new Date(note.settled_at).toLocaleTimeString()}` : "";
  if (note.state === "queued") return "Queued: delivered at the agent's next tool call or turn end";
  if (note.state === "delivered") return `Delivered ${WHERE[note.where] || `(${note.where})`}${at}`;
  if (note.state === "cancelled") return `Cancelled${at}`;
  return `Not delivered: ${note.why || "dropped"}`;
}

function refusalText(err) {
  if (err instanceof ApiError && err.code === "session_ended")
    return "Not sent: this session has ended, so no agent is there to read it";
  if (err instanceof ApiError && err.code === "not_queued")
    return `Too late to cancel: ${err.detail?.state || "no longer queued"}`;
  return `Could not send: ${err.message}`;
}

export class NoteComposer {
  /**
   * @param {() => {ws: string, session: string} | null} where  the session shown
   * @param {import("./review-comments.js").ReviewDraft} draft  the review being gathered
   */
  constructor(where, draft) {
    this.where = where;
    this.draft = draft;
    this.text = h("textarea", {
      class: "note-text-input",
      rows: 1,
      placeholder: "Note to the agent: read at its next tool call or turn end",
      attrs: { "aria-label": "Note to the agent" },
      on: { input: () => this._sync() },
    });
    this.send = h("button", { type: "button", class: "note-send", text: "Send note", disabled: true });
    this.send.addEventListener("click", () => this._post({ text: this.text.value }, () => (this.text.value = "")));
    this.status = h("p", { class: "note-status muted", attrs: { role: "status", "aria-live": "polite" } });
    this.reviewText = h("span", { class: "review-count" });
    this.sendReview = h("button", { type: "button", class: "review-send", text: "Send review" });
    this.sendReview.addEventListener("click", () =>
      this._post({ review: { comments: this.draft.comments } }, () => this.draft.clear()),
    );
    const discard = h("button", { type: "button", class: "link-button review-discard", text: "Discard" });
    discard.addEventListener("click", () => this.draft.clear());
    this.reviewBar = h("div", { class: "review-actions", hidden: true }, this.reviewText, this.sendReview, discard);
    this.list = h("ul", { class: "note-list", attrs: { "aria-label": "Notes to the agent" } });
    this.el = h(
      "section",
      { class: "note-composer", attrs: { "aria-label": "Notes to the agent" } },
      this.reviewBar,
      this.text,
      h("div", { class: "note-actions" }, this.send),
      this.status,
      this.list,
    );
    this.key = null;
    draft.onChange = () => this._syncReview();
  }

  _sync() {
    this.send.disabled = !this.text.value.trim() || !this.where();
  }

  _syncReview() {
    const n = this.draft.comments.length;
    this.reviewBar.hidden = n === 0;
    setText(this.reviewText, `Review: ${n} ${n === 1 ? "comment" : "comments"}`);
  }

  async _post(body, done) {
    const here = this.where();
    if (!here) return;
    this.send.disabled = true;
    this.sendReview.disabled = true;
    try {
      await api("/api/notes", { method: "POST", body: { workspace: here.ws, session: here.session, ...body } });
      done();
      setText(this.status, body.review ? "Review queued" : "Note queued");
    } catch (err) {
      setText(this.status, refusalText(err));
    } finally {
      this.sendReview.disabled = false;
      this._sync();
    }
    await this.refresh();
  }

  /** The session shown changed, or one of its note items arrived: list its notes again. */
  async refresh() {
    const here = this.where();
    const key = here ? `${here.ws} ${here.session}` : null;
    if (key !== this.key) {
      this.key = key;
      this.list.replaceChildren();
      setText(this.status, "");
      this.draft.clear();
    }
    this._sync();
    if (!here) return;
    let notes;
    try {
      const q = `workspace=${encodeURIComponent(here.ws)}&session=${encodeURIComponent(here.session)}`;
      notes = (await api(`/api/notes?${q}`)).notes || [];
    } catch {
      return; // not connected, or an older server
    }
    if (key !== this.key) return;
    this.list.replaceChildren(...notes.map((n) => this._row(n)));
  }

  /** Timeline items arrived: a note's state changed when one of them is a note item. */
  onItems(items) {
    if (items.some((i) => i.type === "system" && i.subtype === "note")) this.refresh();
  }

  _row(note) {
    const row = h(
      "li",
      { class: "note-row", dataset: { state: note.state, id: note.id } },
      h("span", { class: "note-text", text: note.text }),
      h("span", { class: "note-state", text: stateText(note) }),
    );
    if (note.state === "queued") {
      const cancel = h("button", { type: "button", class: "link-button note-cancel", text: "Cancel" });
      cancel.addEventListener("click", async () => {
        cancel.disabled = true;
        try {
          await api(`/api/notes/${encodeURIComponent(note.id)}/cancel`, { method: "POST", body: {} });
        } catch (err) {
          setText(this.status, refusalText(err));
        }
        await this.refresh();
      });
      row.append(cancel);
    }
    return row;
  }
}
