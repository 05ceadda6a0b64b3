// Which workspace and session the Session tab shows (session-tab.js): the lists polled from the
// server, the header's name of what is shown, "Auto" following the session that changed last, a
// choice made in the session list (session-list.js), and a switch asked for from elsewhere (a
// search hit, a notification, an Activity row).

import { ApiError, api, path } from "../lib/page/client.js";
import { setText } from "../lib/page/dom.js";
import { visible } from "../lib/page/visible-text.js";
import {
  AUTO,
  AUTO_RULE,
  autoWorkspace,
  browserWorkspace,
  isDemo,
  sessionLabel,
  workspaceLabel,
} from "./session-pickers.js";
import { SessionFeed } from "./session-feed.js";

export class SessionChoice extends SessionFeed {
  /** Reload the lists (single-flight: overlapping triggers share one run). */
  _refresh(opts) {
    if (!this.refreshing) {
      this.refreshing = this._doRefresh(opts).finally(() => {
        this.refreshing = null;
      });
    }
    return this.refreshing;
  }

  async _loadBrowser() {
    try {
      this.browser = await api(path.latestWorkspace());
    } catch {
      /* an older server or a blip: keep what we had */
    }
  }

  async _doRefresh({ browser = true, sessions = true } = {}) {
    if (this.mismatch || this.ctx.status()?.state !== "connected") return;
    const choice = this.choiceSeq; // what the user had chosen when this read began
    let data;
    try {
      // Indexing is asked on the slower beat: while it runs, its note polls on its own.
      const slower = browser ? [this._loadBrowser(), this.indexing.check()] : [];
      [data] = await Promise.all([api(path.workspaces()), ...slower]);
    } catch (err) {
      this._apiFailed(err);
      return;
    }
    this.workspaces = Array.isArray(data.workspaces) ? data.workspaces : [];
    const signature = JSON.stringify([this.workspaces, browserWorkspace(this.browser)]);
    const changed = signature !== this.listSignature;
    this.listSignature = signature;
    this._fillWorkspaces();
    if (!this.workspaces.length) {
      this._stopStream();
      this.ws = null;
      this._state("no_sessions");
      return;
    }
    // A choice made while the list was read is already being shown: acting on the plan made
    // before it would reopen its workspace and put the chosen session back to Auto.
    if (choice !== this.choiceSeq) return;
    const pinned = this.wsChoice !== AUTO && this.workspaces.some((w) => w.id === this.wsChoice);
    const target = pinned ? this.wsChoice : autoWorkspace(this.workspaces, this.ws).id;
    if (target !== this.ws || !this.stream) await this._openWorkspace(target);
    else if (changed || sessions) await this._loadSessions();
  }

  _apiFailed(err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403 || err.status === 0)) {
      this.ctx.checkNow();
    }
    if (!this.stream) this._state("error", { code: err.code, message: err.message });
  }

  _fillWorkspaces() {
    const inBrowser = browserWorkspace(this.browser);
    this.browserChip.hidden = !this.ws || inBrowser !== this.ws;
    this._syncHeader();
    this._syncDemoBanner();
    this.list?.autoChanged();
  }

  /** The header's one line: the workspace and session shown, and whether "Auto" chose them. */
  _syncHeader() {
    const ws = this.workspaces.find((w) => w.id === this.ws);
    const shown = this.sessions.find((s) => s.id === this.session) || null;
    const auto = this.wsChoice === AUTO;
    const name = [ws ? workspaceLabel(ws) : "", shown ? sessionLabel(shown) : ""].filter(Boolean).join(" · ");
    setText(this.listButtonText, name || "Choose a session");
    this.autoBadge.hidden = !auto;
    this.listButton.title = visible(
      [
        ws?.directory,
        shown ? `${sessionLabel(shown)} (${shown.id})` : null,
        auto ? AUTO_RULE : "Shown until you choose another. Click for every session.",
      ]
        .filter(Boolean)
        .join("\n"),
    );
  }

  /** One line over a demo's timeline says it is one. */
  _syncDemoBanner() {
    const shown = this.workspaces.find((w) => w.id === this.ws);
    this.demoBanner.hidden = !(this.view === "timeline" && isDemo(shown));
  }

  async _openWorkspace(id) {
    this.ws = id;
    this.sessionChoice = AUTO;
    this.session = null;
    this._fillWorkspaces(); // Auto's label, the hint and the demo banner follow the workspace shown
    this._stopStream();
    if (await this._loadSessions()) this._startStream();
  }

  async _loadSessions() {
    if (!this.ws) return false;
    let data;
    try {
      data = await api(path.sessions(this.ws));
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        this.ws = null;
        this._stopStream();
        return false;
      }
      this._apiFailed(err);
      return false;
    }
    this.sessions = Array.isArray(data.sessions) ? data.sessions : [];
    this._fillSessions();
    if (!this.sessions.length) {
      this._stopStream();
      this._state("no_sessions");
      return false;
    }
    return true;
  }

  _fillSessions() {
    this._syncHeader();
  }

  /** A choice made in the session list: `ws` null follows along (Auto); `session` null, the
   * workspace's latest session. */
  chooseFromList({ ws, session }) {
    this.choiceSeq += 1;
    if (ws === null) {
      this.wsChoice = AUTO;
      const target = autoWorkspace(this.workspaces, this.ws)?.id;
      if (!target) return;
      if (target !== this.ws || this.sessionChoice !== AUTO || !this.stream) this._openWorkspace(target);
      return;
    }
    this.switchTo(ws, session ?? AUTO);
  }

  /** Every workspace and its sessions, for the session list (read when it opens). */
  async listData() {
    const [data] = await Promise.all([api(path.allSessions()), this._loadBrowser()]);
    const workspaces = Array.isArray(data.workspaces) ? data.workspaces : [];
    const sessions = new Map();
    for (const s of Array.isArray(data.sessions) ? data.sessions : []) {
      const of = sessions.get(s.workspace);
      if (of) of.push(s);
      else sessions.set(s.workspace, [s]);
    }
    return { workspaces, sessions };
  }

  /** Show another session (a search hit's); resolves once its snapshot is shown. */
  async switchTo(ws, session) {
    this.choiceSeq += 1;
    this.shown?.(false);
    this.wsChoice = ws;
    this._fillWorkspaces();
    this.ws = ws;
    this.sessionChoice = session;
    this.session = null;
    this._stopStream();
    if (!(await this._loadSessions())) return false;
    return new Promise((resolve) => {
      this.shown = resolve;
      this._startStream();
    });
  }
}
