// The session card: one click from the Session tab's header, everything about the session shown
// that the timeline spreads over its length — totals (tokens by kind, cost of the main thread and
// of sub-agents, turns, duration, models), the files it changed, where its transcript is, its ids
// with copy buttons, its first prompt — and Export (HTML, Markdown or JSONL, the file
// `sidemirror export` writes). A modal <dialog>: Escape closes it and focus comes back.

import { fetchFile, api } from "../lib/page/client.js";
import { copyText, h } from "../lib/page/dom.js";
import { fullTime } from "../lib/page/format.js";
import { idRows, totalsRows } from "./card-figures.js";
import { icon } from "./icons.js";
import { exportPath, summaryPath } from "./review-api.js";

const FORMATS = [
  ["html", "HTML (one offline file)"],
  ["md", "Markdown"],
  ["jsonl", "JSONL (the item stream)"],
];
const FILES_SHOWN = 50; // a session that touched hundreds of files: the rest are counted

export class SessionCard {
  /** @param {{ws: string | null, session: string | null}} tab  the Session tab: what it shows */
  constructor(tab) {
    this.tab = tab;
    this.button = h(
      "button",
      {
        type: "button",
        class: "icon-button card-open",
        title: "Session card: totals, ids, export",
        attrs: { "aria-label": "Session card", "aria-haspopup": "dialog" },
        on: { click: () => this.open() },
      },
      icon("card"),
    );
    this.heading = h("h2", { class: "card-title", id: "session-card-title" });
    this.status = h("p", { class: "card-status", attrs: { role: "status", "aria-live": "polite" } });
    this.body = h("div", { class: "card-body" });
    this.format = h(
      "select",
      { class: "card-format", attrs: { "aria-label": "Export format" } },
      FORMATS.map(([value, label]) => h("option", { value, text: label })),
    );
    this.exportButton = h("button", {
      type: "button",
      class: "card-export",
      text: "Export",
      on: { click: () => this.download() },
    });
    this.exportNote = h("p", { class: "card-export-note muted", attrs: { role: "status", "aria-live": "polite" } });
    const close = h(
      "button",
      {
        type: "button",
        class: "icon-button card-close",
        title: "Close",
        attrs: { "aria-label": "Close the session card" },
        on: { click: () => this.dialog.close() },
      },
      icon("cross"),
    );
    this.dialog = h(
      "dialog",
      { class: "session-card", attrs: { "aria-labelledby": this.heading.id } },
      h("div", { class: "card-head" }, this.heading, close),
      this.status,
      this.body,
      h("div", { class: "card-export-row" }, this.format, this.exportButton),
      this.exportNote,
    );
  }

  /** Open on the session shown, and read its summary afresh (a live session grows). */
  async open() {
    const { ws, session } = this.tab;
    if (!ws || !session) return;
    this.where = { ws, session };
    this.heading.textContent = "Session";
    this.status.textContent = "Loading…";
    this.body.replaceChildren();
    this.exportNote.textContent = "";
    if (!this.dialog.open) this.dialog.showModal();
    let s;
    try {
      s = await api(summaryPath(ws, { session }));
    } catch (err) {
      this.status.textContent =
        err.status === 404 ? "This server has no session card (update it)" : `Couldn't load: ${err.message}`;
      return;
    }
    if (this.where.ws !== ws || this.where.session !== session) return; // reopened on another
    this.summary = s;
    // An untitled session (a pushed one) is named by what it was asked first.
    const asked = String(s.first_prompt?.text || "").split("\n")[0];
    this.heading.textContent = s.title || asked || `Session ${s.id}`;
    this.status.textContent = s.skipped_bytes ? "Totals of the part read (the transcript's start is skipped)" : "";
    this.body.replaceChildren(
      this._totals(s),
      this._ids(s),
      this._section(
        "Transcript",
        s.transcript_path
          ? this._copyLine("transcript", "Path", s.transcript_path)
          : h("p", { class: "muted", text: "None on this machine (a pushed or forwarded session)" }),
      ),
      this._files(s),
      this._firstPrompt(s),
    );
  }

  _section(title, ...children) {
    return h("section", { class: "card-section" }, h("h3", { text: title }), children);
  }

  _totals(s) {
    const rows = totalsRows(s).map((r) =>
      h(
        "div",
        { class: "card-row", dataset: { figure: r.key }, title: r.title },
        h("dt", { text: r.label }),
        h("dd", { text: r.value }),
      ),
    );
    const started = rows.find((el) => el.dataset.figure === "started");
    if (started && s.started_at) started.title = fullTime(s.started_at);
    return this._section("Totals", h("dl", { class: "card-figures" }, rows));
  }

  _ids(s) {
    return this._section(
      "Ids",
      idRows(s).map(([key, label, value]) => this._copyLine(key, label, value)),
    );
  }

  _copyLine(key, label, value) {
    const note = h("span", { class: "card-copied muted", attrs: { role: "status", "aria-live": "polite" } });
    const copy = h(
      "button",
      {
        type: "button",
        class: "icon-button card-copy",
        title: `Copy ${label.toLowerCase()}`,
        attrs: { "aria-label": `Copy ${label.toLowerCase()}` },
        on: {
          click: async () => {
            note.textContent = (await copyText(value)) ? "Copied" : "Copy failed — select the text";
            setTimeout(() => (note.textContent = ""), 2000);
          },
        },
      },
      icon("copy"),
    );
    return h(
      "div",
      { class: "card-copy-line", dataset: { id: key } },
      h("span", { class: "card-copy-label", text: label }),
      h("code", { class: "card-copy-value", text: value }),
      copy,
      note,
    );
  }

  _files(s) {
    const files = Array.isArray(s.files_changed) ? s.files_changed : [];
    const items = files
      .slice(0, FILES_SHOWN)
      .map((f) =>
        h(
          "li",
          { class: "card-file" },
          h("span", { class: "diff-path", text: f.path || "(file)" }),
          " ",
          h("span", { class: "diff-added", text: `+${f.added || 0}` }),
          " ",
          h("span", { class: "diff-removed", text: `−${f.removed || 0}` }),
        ),
      );
    const more =
      files.length > FILES_SHOWN ? h("p", { class: "muted", text: `and ${files.length - FILES_SHOWN} more` }) : null;
    const title = `Files changed (${files.length})`;
    if (!files.length) return this._section(title, h("p", { class: "muted", text: "None" }));
    return this._section(title, h("ul", { class: "card-files" }, items), more);
  }

  _firstPrompt(s) {
    const first = s.first_prompt;
    if (!first) return this._section("First prompt", h("p", { class: "muted", text: "None yet" }));
    const text = first.truncated ? `${first.text}…` : first.text;
    return this._section("First prompt", h("blockquote", { class: "card-prompt", text }));
  }

  /** Export: the server streams the file; the panel saves it under the server's name. */
  async download() {
    const here = this.where;
    if (!here) return;
    const format = this.format.value;
    this.exportButton.disabled = true;
    this.exportNote.textContent = "Exporting…";
    try {
      const res = await fetchFile(exportPath(here.ws, { session: here.session, format }));
      const name = fileName(res.headers.get("Content-Disposition")) || `sidemirror-${here.session}.${format}`;
      const url = URL.createObjectURL(await res.blob());
      const link = h("a", { download: name, hidden: true });
      link.href = url; // a blob: URL this page made, never the server's text
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      this.exportNote.textContent = `Saved ${name}`;
    } catch (err) {
      this.exportNote.textContent = `Export failed: ${err.message}`;
    } finally {
      this.exportButton.disabled = false;
    }
  }
}

/** The file name of `attachment; filename="…"`, or null. */
function fileName(disposition) {
  const m = /filename="([^"]+)"/.exec(disposition || "");
  return m ? m[1] : null;
}
