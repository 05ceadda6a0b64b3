// The session's changes: every file its edits touched, with net lines (`/session/changes`),
// each jumping to the tool calls that touched it (loading history as needed).

import { api } from "../lib/page/client.js";
import { h } from "../lib/page/dom.js";
import { changesPath } from "./review-api.js";

export class ChangesView {
  /**
   * @param {object} opts
   * @param {() => {ws: string, session: string} | null} opts.where  the session shown
   * @param {(itemId: string) => Promise<boolean>} opts.jump  show an item in the timeline
   */
  constructor({ where, jump }) {
    this.where = where;
    this.jump = jump;
    this.status = h("p", { class: "changes-status", attrs: { role: "status", "aria-live": "polite" } });
    this.list = h("ul", { class: "changes-list", attrs: { "aria-label": "Files changed" } });
    this.body = h("div", { class: "changes-body", id: "changes-body", hidden: true }, this.status, this.list);
    this.toggle = h("button", {
      type: "button",
      class: "link-button changes-toggle",
      text: "Changes",
      attrs: { "aria-expanded": "false", "aria-controls": "changes-body" },
      on: { click: () => this.setOpen(this.body.hidden) },
    });
    this.el = this.body;
  }

  setOpen(open) {
    this.body.hidden = !open;
    this.toggle.setAttribute("aria-expanded", String(open));
    if (open) this.refresh();
  }

  /** Reload the list (on opening, and when the session changes while open). */
  async refresh() {
    if (this.body.hidden) return;
    const here = this.where();
    if (!here) return;
    this.status.textContent = "Loading changes…";
    let data;
    try {
      data = await api(changesPath(here.ws, { session: here.session }));
    } catch (err) {
      this.status.textContent =
        err.status === 404 ? "This server does not list changes (update it)" : `Couldn't load changes: ${err.message}`;
      return;
    }
    const files = Array.isArray(data?.files) ? data.files : [];
    this.status.textContent = files.length
      ? `${files.length} ${files.length === 1 ? "file" : "files"} changed`
      : "No file changed in this session";
    this.list.replaceChildren(...files.map((f) => this._file(f)));
  }

  _file(file) {
    const ids = Array.isArray(file.item_ids) ? file.item_ids : [];
    const calls = ids.map((id, k) =>
      h("button", {
        type: "button",
        class: "change-call",
        text: String(k + 1),
        attrs: { "aria-label": `Edit ${k + 1} of ${ids.length} to ${file.path}` },
        on: { click: () => this.jump(id) },
      }),
    );
    return h(
      "li",
      { class: "change-file" },
      h(
        "button",
        {
          type: "button",
          class: "change-path",
          disabled: ids.length === 0,
          on: { click: () => ids[0] && this.jump(ids[0]) },
        },
        h("span", { class: "diff-path", text: file.path || "(file)" }),
        " ",
        h("span", { class: "diff-added", text: `+${file.added || 0}` }),
        " ",
        h("span", { class: "diff-removed", text: `−${file.removed || 0}` }),
      ),
      // The numbers are the file's edits in order: a visible word says so (the buttons' own
      // names say it whole to a screen reader).
      ids.length > 1
        ? h(
            "span",
            { class: "change-calls", attrs: { role: "group", "aria-label": `Edits to ${file.path}` } },
            h("span", { class: "change-calls-label", attrs: { "aria-hidden": "true" }, text: "Edits" }),
            calls,
          )
        : null,
    );
  }
}
