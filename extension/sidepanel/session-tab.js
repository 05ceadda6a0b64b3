// The Session tab: its elements, the connection states shown in place of the timeline, and
// going to an item. Which session is shown is session-choice.js; its live stream,
// session-feed.js (the class chain SessionFeed ← SessionChoice ← SessionTab shares one state).

import { api, path } from "../lib/page/client.js";
import { h } from "../lib/page/dom.js";
import { BrowserSummaries } from "./browser-summary.js";
import { icon } from "./icons.js";
import { AUTO, autoWorkspace, browserWorkspace, workspaceLabel } from "./session-pickers.js";
import { IndexingNote } from "./indexing-note.js";
import { stateContent } from "./session-states.js";
import { Timeline } from "./timeline.js";
import { DecisionList } from "./decision-card.js";
import { SessionChoice } from "./session-choice.js";
import { SessionReview } from "./session-review.js";
import { NoteComposer } from "./note-composer.js";
import { ReviewDraft, installReviewComments } from "./review-comments.js";
import { SessionCard } from "./session-card.js";
import { SessionList } from "./session-list.js";

// On "Auto" the workspace list is polled twice a second while the panel is visible (a small local
// request; the header is redrawn only when it changed), so the session that changed last is
// shown within a second. Pinned to a session, nothing follows the latest change: the lists are
// only kept fresh, every 2 s (a panel on one session of a busy fleet asked four times a second
// for nothing, issue 34).
const TICK_MS = 500;
const BROWSER_TICKS = 4; // where the agent acts in the browser, and the lists when pinned: every 2 s
const SESSIONS_TICKS = 20; // the session list's "3 min ago": every 10 s

export function createSessionTab(ctx) {
  return new SessionTab(ctx);
}

class SessionTab extends SessionChoice {
  constructor(ctx) {
    super();
    this.ctx = ctx;
    this.workspaces = [];
    this.sessions = [];
    this.wsChoice = AUTO; // AUTO follows the session that changed last (session-pickers.js)
    this.browser = null; // GET /api/activity/latest-workspace: a hint, never a reason to move
    this.listSignature = null; // the workspace list last seen
    this.sessionChoice = AUTO; // AUTO follows the workspace's latest session
    this.ws = null;
    this.session = null;
    this.stream = null;
    this.refreshTimer = null;
    this.hidden = false; // another tab is shown (the stream goes on, the polls stop)
    this.countdown = null;
    this.mismatch = null;
    this._build();
    ctx.onStatus((status) => this._onStatus(status));
  }

  // --- DOM ---

  _build() {
    // The header: one line, whatever waits below it (the session shown, its state, the gauge).
    this.autoBadge = h("span", { class: "auto-badge", text: "Auto", hidden: true });
    this.listButtonText = h("span", { class: "session-button-text", text: "Choose a session" });
    this.listButton = h(
      "button",
      {
        type: "button",
        id: "session-list-button",
        class: "session-button",
        attrs: { "aria-haspopup": "dialog" },
        on: { click: () => this.openList() },
      },
      this.autoBadge,
      this.listButtonText,
      h("span", { class: "session-button-caret", text: "▾", attrs: { "aria-hidden": "true" } }),
    );
    this.stateChip = h("span", { class: "chip session-state", hidden: true });
    this.browserChip = h("span", {
      class: "chip browser-hint",
      hidden: true,
      text: "in browser",
      title: "This workspace's agent acted in the browser in the last 2 minutes",
    });
    this.pickers = h(
      "div",
      { class: "toolbar session-line", hidden: true },
      this.listButton,
      this.stateChip,
      this.browserChip,
    );
    this.card = new SessionCard(this); // totals, ids, export: one click from the header
    this.list = new SessionList({
      load: () => this.listData(),
      choose: (choice) => this.chooseFromList(choice),
      current: () => {
        const auto = this.autoWorkspaceNow();
        return {
          ws: this.ws,
          session: this.session,
          auto: this.wsChoice === AUTO,
          autoLabel: auto,
          inBrowser: browserWorkspace(this.browser),
        };
      },
    });
    this.demoBanner = h("p", {
      class: "banner demo-banner",
      hidden: true,
      text: "Demo: a recorded session replayed. Your own sessions show here once an agent runs.",
    });

    this.bannerText = h("span", { class: "banner-text" });
    this.bannerButton = h("button", {
      type: "button",
      class: "link-button",
      text: "Retry now",
      on: { click: () => this.stream?.retryNow() },
    });
    this.banner = h(
      "div",
      { class: "banner", hidden: true, attrs: { role: "status", "aria-live": "polite" } },
      this.bannerText,
      this.bannerButton,
    );
    this.mismatchBanner = h("div", { class: "banner danger", hidden: true, attrs: { role: "alert" } });

    this.indexing = new IndexingNote(() => this._refresh());
    this.stateView = h("div", { class: "state-view", attrs: { "aria-live": "polite" } });
    this.scroller = h("div", { class: "scroller", hidden: true });
    this.pill = h(
      "button",
      { type: "button", class: "pill", hidden: true, on: { click: () => this.timeline.scrollToBottom() } },
      icon("down"),
      h("span", { class: "pill-text", text: "New activity" }),
    );
    this.browserSummaries = new BrowserSummaries({
      fetchActivity: (ws, id) => api(`${path.item(ws, id)}/activity`),
      root: this.scroller,
    });
    this.timeline = new Timeline(this.scroller, {
      fetchFull: (id) => api(path.item(this.ws, id)),
      onToolResult: (card, item) => this.browserSummaries.onResult(card, item, this.ws),
      onUnseen: (n) => {
        this.pill.hidden = n === 0;
        this.pill.querySelector(".pill-text").textContent = n === 1 ? "1 new item" : `${n} new items`;
      },
      onRender: () => this.review?.onRender(),
      onItems: (items, reset) => {
        this.review?.onItems(items, reset);
        this.notes?.onItems(items);
      },
    });
    // Permission requests of the session shown, answered from here (decision-card.js).
    this.decisions = new DecisionList(
      (r) => r.workspace === this.ws && (!this.session || r.session === this.session),
      () => (this.ws && this.session ? { workspace: this.ws, session: this.session } : null),
    );
    this.review = new SessionReview(this);
    // Notes and review comments to the session's agent (note-composer.js, review-comments.js).
    const draft = new ReviewDraft();
    this.notes = new NoteComposer(
      () => (this.ws && this.session ? { ws: this.ws, session: this.session } : null),
      draft,
    );
    installReviewComments(this.scroller, draft);
    this.pickers.append(this.review.gauge.el, this.card.button);
    this.panel = h(
      "div",
      { class: "session-tab" },
      this.pickers,
      this.demoBanner,
      this.mismatchBanner,
      this.banner,
      this.indexing.el,
      this.decisions.el,
      this.stateView,
      this.review.el,
      this.scroller,
      this.pill,
      this.notes.el,
      this.list.el,
      this.card.dialog,
    );
    this.review.installKeys(this.panel);
  }

  show() {
    const wasHidden = this.hidden;
    this.hidden = false;
    this._onStatus(this.ctx.status());
    // Auto may have moved on while another tab was shown: look now, not at the next tick.
    if (wasHidden && this.stream && (this.wsChoice === AUTO || this.sessionChoice === AUTO)) this._refresh();
    if (wasHidden) this.review?.agentFigures.poke();
    clearInterval(this.refreshTimer);
    let ticks = 0;
    this.refreshTimer = setInterval(() => {
      if (document.hidden || this.refreshing) return;
      ticks += 1;
      const browser = ticks % BROWSER_TICKS === 0;
      if (!browser && this.wsChoice !== AUTO && this.sessionChoice !== AUTO) return;
      this._refresh({ browser, sessions: ticks % SESSIONS_TICKS === 0 });
    }, TICK_MS);
  }

  /** Show one session, pinned (the Sessions view, a notification click). */
  async focus(workspace, session) {
    this.choiceSeq += 1;
    this.wsChoice = workspace;
    this.ws = workspace;
    this.sessionChoice = session;
    this.session = session;
    this._stopStream();
    this._fillWorkspaces();
    if (await this._loadSessions()) this._startStream();
    this.decisions.refresh();
  }

  /** The list of every session, over the timeline (from the header or the Sessions view). */
  openList() {
    return this.list.open();
  }

  /** What "Auto" would show now, named for the list's Auto row. */
  autoWorkspaceNow() {
    const ws = autoWorkspace(this.workspaces, this.ws);
    return ws ? workspaceLabel(ws) : "";
  }

  hide() {
    // Keep streaming while another tab is shown: switching back is instant and nothing is missed.
    // The polls stop: on a busy machine their fetches kept the panel's main thread from painting
    // the tab the reader looks at (the fleet bench, docs/benchmarks.md).
    this.hidden = true;
    clearInterval(this.refreshTimer);
  }

  // --- connection status from the worker ---

  _onStatus(status) {
    if (!status || status.state === "connecting") {
      if (!this.stream) this._state("connecting");
      return;
    }
    if (status.state === "error" && status.error?.code === "protocol_mismatch") {
      this._protocolMismatch(status.protocol);
      return;
    }
    if (status.state === "connected") {
      if (this.mismatch) return;
      if (this.stream) {
        this.stream.retryNow();
      } else if (!this.ws || this.view !== "timeline") {
        this._refresh();
      }
      return;
    }
    if (this.stream) return; // the stream's own reconnect banner covers it
    if (status.state === "not_running" || status.state === "other_server") this._state(status.state);
    else this._state("error", status.error);
  }

  /** Show one item (an Activity row's back-link): its workspace and session, then the item. */
  async openItem({ workspace, session, itemId }) {
    if (workspace && (workspace !== this.ws || (session && session !== this.session) || !this.stream)) {
      if (!(await this.switchTo(workspace, session || AUTO))) return false;
    }
    // Through the timeline: the item may be off screen (not in the DOM) or on an earlier page.
    const shown = await this.review.jumpTo(itemId);
    const el = shown ? this.timeline.list.querySelector(`[data-item-id="${CSS.escape(itemId)}"]`) : null;
    el?.classList.add("flash"); // so the eye finds it
    if (el) setTimeout(() => el.classList.remove("flash"), 2000);
    return shown;
  }

  // --- full-panel states ---

  async _state(view, error = null) {
    // The lists are polled: the same full-panel state is not drawn again (focus stays put).
    const key = [view, error?.code, error?.message, this.ctx.status()?.port].join("\u0000");
    if (key === this.stateKey && view === this.view) return;
    this.stateKey = key;
    this.view = view;
    const timeline = view === "timeline";
    this.scroller.hidden = !timeline;
    this.review.el.hidden = !timeline;
    this.stateView.hidden = timeline;
    this.pickers.hidden = !(timeline || (view === "no_sessions" && this.workspaces.length));
    if (!timeline) this.pill.hidden = true;
    this._syncDemoBanner();
    if (timeline) return;
    // Nothing listed yet because the archive is still being read: the indexing note says so.
    this.stateView.hidden = view === "no_sessions" && this.indexing.active;
    const content = await stateContent(view, { error, checkNow: () => this.ctx.checkNow() });
    if (this.view === view) this.stateView.replaceChildren(content);
  }
}
