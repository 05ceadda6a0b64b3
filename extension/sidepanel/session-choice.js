// Which workspace and session the Session tab shows (session-tab.js): the lists polled from the
// server, the pickers filled from them, "Auto" following the session that changed last, and a
// switch asked for from elsewhere (a search hit, a notification, an Activity row).

import { ApiError, api, path } from "../lib/page/client.js";
import {
  AUTO,
  autoWorkspace,
  browserWorkspace,
  fillPicker,
  isDemo,
  sessionOptions,
  workspaceOptions,
} from "./session-pickers.js";
import { SessionFeed } from "./session-feed.js";

export class SessionChoice extends SessionFeed {
  /** Reload the pickers (single-flight: overlapping triggers share one run). */
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
    let data;
    try {
      [data] = await Promise.all([api(path.workspaces()), browser ? this._loadBrowser() : null, this.indexing.check()]);
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
    fillPicker(
      this.wsSelect,
      workspaceOptions(this.workspaces, autoWorkspace(this.workspaces, this.ws), inBrowser),
      this.wsChoice,
    );
    this.browserChip.hidden = !this.ws || inBrowser !== this.ws;
    this._syncDemoBanner();
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
    fillPicker(this.sessionSelect, sessionOptions(this.sessions), this.sessionChoice);
  }

  _pickWorkspace() {
    this.wsChoice = this.wsSelect.value;
    const target = this.wsChoice === AUTO ? autoWorkspace(this.workspaces, this.ws)?.id : this.wsChoice;
    if (target && target !== this.ws) this._openWorkspace(target);
  }

  _pickSession() {
    const choice = this.sessionSelect.value;
    if (choice === this.sessionChoice) return;
    this.sessionChoice = choice;
    this._startStream();
  }

  /** Show another session (a search hit's); resolves once its snapshot is shown. */
  async switchTo(ws, session) {
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
