// The session list: every session of every workspace (this machine's and forwarded hosts'),
// filling the Session tab, opened from its header or from the Sessions view. A filter field
// keeps the focus: typing filters (session-list-model.js), the arrows move the choice, Enter
// opens it and Escape closes the list. Rows are virtualized (virtual-list.js): ten thousand
// sessions cost the DOM of a screenful. Every string from the server goes through h().

import { h, setText } from "../lib/page/dom.js";
import { compactNumber, cost, dayClock, fullTime } from "../lib/page/format.js";
import { AUTO_RULE, hostGone, workspaceLabel } from "./session-pickers.js";
import { stateLabel, stateSource } from "./state-chip.js";
import { buildRows, countRows, filterRows, nextIndex, sessionSpan, shortId, spanText } from "./session-list-model.js";
import { VirtualList } from "./virtual-list.js";

const plural = (n, word) => `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
const ROW_ESTIMATE = { auto: 44, group: 30, session: 50 };
let listIds = 0;

export class SessionList {
  /**
   * @param {object} opts
   * @param {() => Promise<{workspaces: any[], sessions: Map<string, any[]>}>} opts.load  the lists
   * @param {(choice: {ws: string | null, session: string | null}) => void} opts.choose  open one
   *   (`ws` null: Auto; `session` null: the workspace's latest)
   * @param {() => {ws: string | null, session: string | null, auto: boolean, autoLabel: string,
   *   inBrowser: string | null}} opts.current  what is shown now, and what Auto would show
   */
  constructor({ load, choose, current }) {
    this.load = load;
    this.choose = choose;
    this.current = current;
    this.all = [];
    this.rows = [];
    this.selected = -1;
    this.loaded = false;
    this.id = `session-list-${++listIds}`;
    this.filter = h("input", {
      type: "search",
      class: ["text-field", "session-filter"],
      placeholder: "Filter by title or workspace",
      attrs: {
        role: "combobox",
        "aria-label": "Filter sessions",
        "aria-controls": this.id,
        "aria-expanded": "true",
        "aria-autocomplete": "list",
      },
      on: { input: () => this._applyFilter(), keydown: (ev) => this._key(ev) },
    });
    this.closeButton = h("button", {
      type: "button",
      class: "link-button session-list-close",
      text: "Close",
      title: "Back to the session (Escape)",
      on: { click: () => this.close() },
    });
    this.status = h("p", { class: "session-list-status", attrs: { "aria-live": "polite" } });
    this.list = h("div", { class: "session-list-rows", id: this.id, attrs: { role: "listbox" } });
    this.scroller = h("div", { class: "session-list-scroller" }, this.list);
    this.el = h(
      "div",
      { class: "session-list", hidden: true, attrs: { role: "dialog", "aria-label": "All sessions" } },
      h("div", { class: "session-list-head" }, this.filter, this.closeButton),
      this.status,
      this.scroller,
    );
    this.virtual = new VirtualList({
      scroller: this.scroller,
      list: this.list,
      build: (row) => this._build(row),
      estimate: (row) => ROW_ESTIMATE[row.kind] || 50,
      onRender: () => this._syncMarks(),
    });
    this.virtual.pinned = false;
  }

  get isOpen() {
    return !this.el.hidden;
  }

  /** Show the list (what was loaded last at once, then the lists read again). */
  async open() {
    this.opener = document.activeElement;
    this.el.hidden = false;
    this.filter.value = "";
    this.filter.focus();
    this._show(true);
    await this.refresh();
  }

  close({ restoreFocus = true } = {}) {
    if (!this.isOpen) return;
    this.el.hidden = true;
    if (restoreFocus && this.opener instanceof HTMLElement && this.opener.isConnected) this.opener.focus();
  }

  /** What Auto would show may have changed (the tab polls the lists): its row says it. */
  autoChanged() {
    const row = this.rows[0];
    if (!this.isOpen || row?.kind !== "auto" || !row.el) return;
    const label = this.current().autoLabel;
    const meta = row.el.querySelector(".sl-meta");
    if (meta) setText(meta, label ? `now: ${label}` : "");
  }

  /** Read the lists again and show them, the filter and the choice kept. */
  async refresh() {
    let data;
    try {
      data = await this.load();
    } catch (err) {
      setText(this.status, `Could not read the sessions: ${err?.message || err}`);
      return;
    }
    this.all = buildRows(data.workspaces, data.sessions);
    this.loaded = true;
    if (this.isOpen) this._show(false);
  }

  /** The rows of `all` the filter keeps, shown; `fresh`: select the session shown now. */
  _show(fresh) {
    const keep = fresh ? null : this.rows[this.selected]?.key;
    this.rows = filterRows(this.all, this.filter.value);
    let at = keep ? this.rows.findIndex((r) => r.key === keep) : -1;
    if (at < 0) at = this._currentIndex();
    this.selected = at;
    this.virtual.pinned = false;
    this.virtual.setRows(this.rows, /** @type {any} */ ({ row: this.rows[0], delta: 0 }));
    this._select(at);
    this._status();
  }

  _applyFilter() {
    this.rows = filterRows(this.all, this.filter.value);
    this.selected = this.rows.length ? (this.rows[0].kind === "auto" ? 0 : this._firstSession()) : -1;
    this.virtual.pinned = false;
    this.virtual.setRows(this.rows, /** @type {any} */ ({ row: this.rows[0], delta: 0 }));
    this._select(this.selected);
    this._status();
  }

  _firstSession() {
    const i = this.rows.findIndex((r) => r.kind === "session");
    return i < 0 ? 0 : i;
  }

  /** The row of the session shown now (Auto when it follows along). */
  _currentIndex() {
    const now = this.current();
    if (now.auto) return this.rows.length ? 0 : -1;
    const i = this.rows.findIndex((r) => r.kind === "session" && r.ws.id === now.ws && r.s.id === now.session);
    return i < 0 ? (this.rows.length ? 0 : -1) : i;
  }

  _status() {
    const { sessions, groups } = countRows(this.rows);
    const total = countRows(this.all);
    let text;
    if (!this.loaded) text = "Reading the sessions…";
    else if (this.filter.value.trim())
      text = `${sessions} of ${plural(total.sessions, "session")} match, in ${plural(groups, "workspace")}`;
    else text = `${plural(total.sessions, "session")} in ${plural(total.groups, "workspace")}`;
    this.status.textContent = text;
  }

  // --- keys (the focus stays in the filter) ---

  _key(ev) {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      this._select(nextIndex(this.rows, this.selected, ev.key === "ArrowDown" ? 1 : -1));
    } else if (ev.key === "PageDown" || ev.key === "PageUp") {
      ev.preventDefault();
      const page = Math.max(1, Math.floor(this.scroller.clientHeight / ROW_ESTIMATE.session));
      this._select(nextIndex(this.rows, this.selected, ev.key === "PageDown" ? page : -page));
    } else if ((ev.key === "Home" || ev.key === "End") && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault(); // plain Home and End stay the filter's own
      this._select(ev.key === "Home" ? nextIndex(this.rows, -1, 1) : nextIndex(this.rows, -1, -1));
    } else if (ev.key === "Enter") {
      ev.preventDefault();
      const row = this.rows[this.selected];
      if (row) this._choose(row);
    } else if (ev.key === "Escape") {
      ev.preventDefault();
      ev.stopPropagation();
      this.close();
    }
  }

  _select(i) {
    this.selected = i;
    const row = this.rows[i];
    if (!row) {
      this._syncMarks();
      this.filter.removeAttribute("aria-activedescendant");
      return;
    }
    this.virtual.scrollToIndex(i, "nearest");
    this._syncMarks();
    this.filter.setAttribute("aria-activedescendant", this._rowId(row));
  }

  /** The rows in the DOM show whether each is the choice. Rows keep their elements across
   * filters, so a mark is set from the choice at each render, never left from an earlier one. */
  _syncMarks() {
    const chosen = this.rows[this.selected];
    for (const row of this.virtual.mounted) {
      const on = row === chosen;
      if (row.el.classList.contains("selected") !== on) {
        row.el.classList.toggle("selected", on);
        row.el.setAttribute("aria-selected", String(on));
      }
    }
  }

  _rowId(row) {
    return `${this.id}-${row.key.replace(/\s/g, "_")}`;
  }

  _choose(row) {
    this.close({ restoreFocus: false });
    if (row.kind === "auto") this.choose({ ws: null, session: null });
    else if (row.kind === "group") this.choose({ ws: row.ws.id, session: null });
    else this.choose({ ws: row.ws.id, session: row.s.id });
  }

  // --- rows ---

  _build(row) {
    const el =
      row.kind === "auto" ? this._autoRow() : row.kind === "group" ? this._groupRow(row.ws) : this._sessionRow(row);
    el.id = this._rowId(row);
    el.setAttribute("role", "option");
    const selected = this.rows[this.selected] === row;
    el.classList.toggle("selected", selected);
    el.setAttribute("aria-selected", String(selected));
    el.addEventListener("mousedown", (ev) => ev.preventDefault()); // the focus stays in the filter
    el.addEventListener("click", () => this._choose(row));
    return el;
  }

  _autoRow() {
    const now = this.current();
    return h(
      "div",
      { class: ["sl-row", "sl-auto", now.auto && "current"], title: AUTO_RULE },
      h("span", { class: "sl-title", text: "Auto — the session that changed last" }),
      h("span", { class: "sl-meta", text: now.autoLabel ? `now: ${now.autoLabel}` : "" }),
    );
  }

  _groupRow(ws) {
    const note = hostGone(ws.host);
    const inBrowser = this.current().inBrowser === ws.id;
    return h(
      "div",
      { class: ["sl-row", "sl-group", note && "gone"], title: ws.directory, dataset: { workspace: ws.id } },
      h("span", { class: "sl-ws", text: workspaceLabel(ws) }),
      ws.branch ? h("span", { class: "sl-branch", text: `⎇ ${ws.branch}` }) : null,
      note ? h("span", { class: "sl-host-note", text: note }) : null,
      inBrowser
        ? h("span", {
            class: "chip browser-hint",
            text: "in the browser",
            title: "Its agent acted in the browser lately",
          })
        : null,
      h("span", { class: "sl-count", text: `${ws.sessions ?? ""}` }),
    );
  }

  _sessionRow(row) {
    const { s, ws } = row;
    const now = this.current();
    const span = sessionSpan(s);
    const meta = [
      s.agent,
      s.started_at ? dayClock(s.started_at) : "", // "14:05" today, "Dec 3, 14:05" another day
      span != null ? spanText(span) : "",
      s.turns != null ? `${compactNumber(s.turns)} ${s.turns === 1 ? "turn" : "turns"}` : "",
      s.cost_usd != null ? cost(s.cost_usd) : "",
    ].filter(Boolean);
    const title = (s.title || "").trim() || `Session ${shortId(s.id)}`;
    return h(
      "div",
      {
        class: ["sl-row", "sl-session", !now.auto && now.ws === ws.id && now.session === s.id && "current"],
        dataset: { workspace: ws.id, session: s.id },
        title: s.started_at ? `${title}\nStarted ${fullTime(s.started_at)}\n${s.id}` : `${title}\n${s.id}`,
      },
      h(
        "span",
        { class: "sl-line" },
        h("span", { class: "sl-title", text: s.parent_id ? `↳ ${title}` : title }),
        h("span", {
          class: `chip st-${String(s.state).replace(/[^a-z]/g, "")}${s.exact ? "" : " inferred"}`,
          text: stateLabel(s),
          title: stateSource(s),
          dataset: { exact: String(Boolean(s.exact)), reason: s.reason || "" },
        }),
      ),
      h(
        "span",
        { class: "sl-line sl-meta" },
        h("span", { class: "sl-facts", text: meta.join(" · ") }),
        h("code", { class: "sl-id", text: shortId(s.id) }),
      ),
    );
  }
}
