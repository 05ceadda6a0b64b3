// The Activity tab: what agents do in the browser (docs/api.md), live.
//
// One row per command: a `command_start` shows as pending and its `command_end` (matched by the
// server's `start_id`) replaces it in place with ✓/✗ and the duration. Rows expand (button with
// aria-expanded) to show URL, arguments, result and refs. A filter box matches command, args and
// URL; the list sticks to the bottom only when the user is there; the DOM is capped at MAX_ROWS.
// Above the list, the page overlay's switch for the site the agent acted on (overlay-toggle.js).
// A `gap` from the server (cursor fell out of the 1000-entry ring) shows a "missed N" banner;
// `reset` clears the list first. Every string from the server goes through textContent.

import { ApiError, api, path } from "../lib/page/client.js";
import { SERVE_COMMAND } from "../lib/shared/config.js";
import { h, setText } from "../lib/page/dom.js";
import { ActivityStream } from "../lib/page/activity-stream.js";
import { isOwnNoise } from "./activity-model.js";
import { fillDetails, fillRow } from "./activity-row.js";
import { icon } from "./icons.js";
import { OverlayToggles } from "./overlay-toggle.js";

const MAX_ROWS = 1000;
const BOTTOM_SLACK_PX = 40;

export function createActivityTab(ctx) {
  return new ActivityTab(ctx);
}

class ActivityTab {
  constructor(ctx) {
    this.ctx = ctx;
    this.rows = new Map(); // entry id (start and end) → record {entry, end, li, ...}
    this.filter = "";
    this.missed = 0;
    this.unseen = 0;
    this.paused = false;
    this.stream = null;
    this.workspaceNames = new Map();
    this.ownOrigin = chrome.runtime.getURL("");
    this._build();
    ctx.onStatus((s) => this._onStatus(s));
  }

  // --- DOM ---

  _build() {
    this.filterInput = h("input", {
      type: "search",
      id: "activity-filter",
      class: "filter-input text-field",
      placeholder: "Filter by command, args or URL",
      autocomplete: "off",
      spellcheck: false,
      on: { input: () => this._setFilter(this.filterInput.value) },
    });
    this.pauseButton = h("button", {
      type: "button",
      class: "button small",
      text: "Pause",
      title: "Pause live updates (resumes where it left off)",
      attrs: { "aria-pressed": "false" },
      on: { click: () => this._togglePause() },
    });
    this.count = h("span", { class: "act-count muted" });
    const toolbar = h(
      "div",
      { class: "toolbar act-toolbar" },
      h("label", { htmlFor: "activity-filter", class: "visually-hidden", text: "Filter activity" }),
      this.filterInput,
      this.pauseButton,
    );

    this.gapText = h("span", { class: "banner-text" });
    this.gapBanner = h(
      "div",
      { class: "banner gap-banner", hidden: true, attrs: { role: "status" } },
      icon("alert"),
      this.gapText,
      h("button", { type: "button", class: "link-button", text: "Dismiss", on: { click: () => this._clearGap() } }),
    );
    this.connText = h("span", { class: "banner-text" });
    this.connRetry = h("button", {
      type: "button",
      class: "link-button",
      text: "Retry now",
      hidden: true,
      on: { click: () => (this.stream ? this.stream.retryNow() : this.ctx.checkNow()) },
    });
    this.connBanner = h(
      "div",
      { class: "banner", hidden: true, attrs: { role: "status", "aria-live": "polite" } },
      this.connText,
      this.connRetry,
    );

    this.list = h("ol", { class: "act-list", attrs: { "aria-label": "Browser activity" } });
    this.empty = h("div", { class: "state empty act-empty" });
    this.noMatch = h("p", { class: "act-nomatch muted", hidden: true });
    this.scroller = h("div", { class: "scroller act-scroller" }, this.list, this.noMatch, this.empty);
    this.stuck = true; // following the bottom; updated by scrolling, read without layout
    this.autoTop = 0; // where the tab last scrolled itself to
    this.scroller.addEventListener("scroll", () => {
      // The event of a scroll the tab made itself comes a frame later, when a burst may have
      // added rows below: only a move up from where the tab put it means the user left.
      this.stuck = this._atBottom() || this.scroller.scrollTop >= this.autoTop;
      if (this.stuck) this._setUnseen(0);
    });
    this.pill = h(
      "button",
      { type: "button", class: "pill", hidden: true, on: { click: () => this._scrollToBottom() } },
      icon("down"),
      h("span", { class: "pill-text", text: "New activity" }),
    );
    this.footer = h("div", { class: "act-footer" }, this.count);
    this.overlay = new OverlayToggles();
    this.panel = h(
      "div",
      { class: "activity-tab" },
      toolbar,
      this.overlay.el,
      this.connBanner,
      this.gapBanner,
      this.scroller,
      this.pill,
      this.footer,
    );
    this._renderEmpty();
    this._sync();
  }

  show() {
    this.shown = true;
    this._onStatus(this.ctx.status());
  }

  hide() {
    // Keep streaming: switching back is instant and nothing is missed.
  }

  // --- connection ---

  _onStatus(status) {
    if (!this.shown) return;
    if (this.paused) return; // the "Paused" banner stays until the user resumes
    const connected = status?.state === "connected";
    if (connected) {
      this._loadNames();
      if (!this.stream && !this.paused) this._start();
      else this.stream?.retryNow();
      if (!this.stream || this.stream.state === "live") this._conn(null);
      return;
    }
    if (this.stream && this.stream.state === "live") return; // the stream notices by itself
    if (!status || status.state === "connecting") this._conn("Connecting to the Sidemirror server…");
    else if (status.state === "not_running") this._conn(`Server not running — start it with ${SERVE_COMMAND}`, true);
    else if (status.state === "other_server") this._conn("Not connected — choose a Sidemirror server above.", true);
    else this._conn(status.error?.message || "Connection error", true);
  }

  _start() {
    this.stream = new ActivityStream({
      limit: MAX_ROWS,
      on: {
        message: (type, data) => this._onMessage(type, data),
        state: (state, info) => this._onStreamState(state, info),
      },
    });
    this.stream.start();
  }

  _togglePause() {
    this.paused = !this.paused;
    this.pauseButton.textContent = this.paused ? "Resume" : "Pause";
    this.pauseButton.setAttribute("aria-pressed", String(this.paused));
    if (this.paused) {
      this.stream?.stop();
      this._conn("Paused — live updates stop until you resume.");
    } else if (this.stream) {
      this._conn(null);
      this.stream.start(); // resumes after the last id it saw
    } else {
      this._onStatus(this.ctx.status());
    }
  }

  _onStreamState(state, info) {
    clearInterval(this.countdown);
    this.panel.dataset.stream = state;
    if (this.paused) return;
    if (state === "live" || state === "stopped" || state === "idle") {
      this._conn(null);
      if (state === "live") this.list.setAttribute("aria-busy", "false");
      return;
    }
    if (state === "connecting" || info.now) {
      this._conn(state === "connecting" ? null : "Reconnecting…");
      return;
    }
    const tick = () => {
      const s = Math.max(0, Math.ceil((info.retryAt - Date.now()) / 1000));
      this._conn(`Connection lost — reconnecting in ${s} s (attempt ${info.attempt})`, true);
    };
    tick();
    this.countdown = setInterval(tick, 1000);
  }

  _conn(text, canRetry = false) {
    this.connBanner.hidden = !text;
    this.connBanner.classList.toggle("reconnecting", Boolean(text));
    if (text) setText(this.connText, text);
    this.connRetry.hidden = !canRetry;
  }

  async _loadNames() {
    if (this.namesLoaded) return;
    this.namesLoaded = true;
    try {
      const data = await api(path.workspaces());
      for (const w of data.workspaces || []) this.workspaceNames.set(w.id, w.name);
    } catch (err) {
      this.namesLoaded = !(err instanceof ApiError && err.status === 0);
    }
  }

  // --- messages ---

  _onMessage(type, data) {
    if (type === "gap") {
      if (data.reset) this._clear();
      this._addGap(Number(data.missed) || 0);
      return;
    }
    if (type === "activity") this._add(data);
  }

  _add(entry) {
    if (!entry || !entry.id || this.rows.has(entry.id)) return;
    if (isOwnNoise(entry, this.ownOrigin)) return; // a blank tab, or this panel's own page
    if (entry.url) this.overlay.noteUrl(entry.url);
    const stick = this.stuck;
    const start = entry.type === "command_end" && entry.start_id ? this.rows.get(entry.start_id) : null;
    if (start && !start.end) {
      start.end = entry;
      this.rows.set(entry.id, start);
      this._fill(start);
    } else {
      const rec = { entry, end: null, li: null, open: false };
      this.rows.set(entry.id, rec);
      rec.li = h("li", { class: "act-row" });
      this._fill(rec);
      this.list.append(rec.li);
      this._cap();
      if (!stick && this._matches(rec)) this._setUnseen(this.unseen + 1);
    }
    this._later();
  }

  /** Count, empty state and scrolling once per burst (a replay is up to 1000 events). */
  _later() {
    if (this.pendingSync) return;
    this.pendingSync = setTimeout(() => {
      this.pendingSync = null;
      this._sync();
      if (this.stuck) this._scrollToBottom();
    }, 16);
  }

  /** (Re)build a row from its start (or lone entry) and its end. */
  _fill(rec) {
    fillRow(rec, {
      onToggle: () => this._toggle(rec),
      names: this.workspaceNames,
      openLink: (target) => this.ctx.openItem(target),
    });
    rec.li.hidden = !this._matches(rec);
  }

  _toggle(rec) {
    rec.open = !rec.open;
    rec.summary.setAttribute("aria-expanded", String(rec.open));
    rec.detailsEl.hidden = !rec.open;
    if (rec.open) fillDetails(rec, rec.detailsEl, this.workspaceNames);
    else rec.detailsEl.replaceChildren();
  }

  // --- filter, cap, gap, empty ---

  _matches(rec) {
    return !this.filter || rec.search.includes(this.filter);
  }

  _setFilter(text) {
    this.filter = text.trim().toLowerCase();
    for (const rec of this._records()) rec.li.hidden = !this._matches(rec);
    this._sync();
    this._scrollToBottom();
  }

  *_records() {
    for (const li of this.list.children) {
      const rec = this.rows.get(li.dataset.id);
      if (rec) yield rec;
    }
  }

  _cap() {
    while (this.list.childElementCount > MAX_ROWS) {
      const li = this.list.firstElementChild;
      const rec = this.rows.get(li.dataset.id);
      if (rec) {
        this.rows.delete(rec.entry.id);
        if (rec.end) this.rows.delete(rec.end.id);
      }
      li.remove();
    }
  }

  _clear() {
    this.list.replaceChildren();
    this.rows.clear();
    this._setUnseen(0);
    this._sync();
  }

  _addGap(n) {
    this.missed += n;
    this.gapBanner.hidden = false;
    this.gapText.textContent = this.missed
      ? `Missed ${this.missed.toLocaleString()} ${this.missed === 1 ? "event" : "events"} — older than the server keeps (1,000 per workspace).`
      : "The activity log restarted; showing what the server has.";
  }

  _clearGap() {
    this.missed = 0;
    this.gapBanner.hidden = true;
  }

  _renderEmpty() {
    this.empty.replaceChildren(
      h("h2", { text: "No browser activity yet" }),
      h("p", {
        text: "When an agent works in a browser, each navigation, click and snapshot shows up here as it happens.",
      }),
      h(
        "p",
        { class: "muted" },
        "Agents report with the MCP tool ",
        h("code", { text: "sidemirror_report_browser_action" }),
        " (see Connect), ",
        h("code", { text: "POST /api/activity" }),
        ", or ",
        h("code", { text: "sidemirror observe-cdp" }),
        " for a Chrome started with --remote-debugging-port.",
      ),
    );
  }

  _sync() {
    const total = this.list.childElementCount;
    let shown = 0;
    let pending = 0;
    for (const li of this.list.children) {
      if (!li.hidden) shown += 1;
      if (li.dataset.category === "pending") pending += 1;
    }
    this.empty.hidden = total > 0;
    this.list.hidden = total === 0;
    this.noMatch.hidden = !(total > 0 && shown === 0);
    if (!this.noMatch.hidden) setText(this.noMatch, `No entries match “${this.filterInput.value.trim()}”.`);
    const parts = [];
    if (total)
      parts.push(this.filter ? `${shown} of ${total} entries` : `${total} ${total === 1 ? "entry" : "entries"}`);
    if (pending) parts.push(`${pending} running`);
    const text = parts.join(" · ");
    if (this.count.textContent !== text) this.count.textContent = text;
    this.footer.hidden = !text;
  }

  // --- scrolling ---

  _atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight <= BOTTOM_SLACK_PX;
  }

  _scrollToBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this.autoTop = this.scroller.scrollTop;
    this.stuck = true;
    this._setUnseen(0);
  }

  _setUnseen(n) {
    if (n === this.unseen) return;
    this.unseen = n;
    this.pill.hidden = n === 0;
    this.pill.querySelector(".pill-text").textContent = n === 1 ? "1 new entry" : `${n} new entries`;
  }
}
