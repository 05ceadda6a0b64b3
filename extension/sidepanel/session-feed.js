// The live stream of the session the Session tab shows (session-tab.js): started and stopped as
// the choice changes (session-choice.js), its messages sent to the timeline, and what the
// connection says about itself (the reconnect banner, the session's state chip, a protocol
// mismatch). The tab builds the elements and owns the timeline; this is its stream half.

import { setText, h } from "../lib/page/dom.js";
import { CONTROL_TYPES, PROTOCOL_VERSION } from "../lib/shared/protocol.gen.js";
import { SessionStream } from "../lib/page/session-stream.js";
import { icon } from "./icons.js";
import { AUTO } from "./session-pickers.js";

// Stream control messages are not session items. The set comes from the models, so a control
// message added on the server is never drawn as an item; every other type goes to the timeline.
const CONTROL = new Set(CONTROL_TYPES);

export class SessionFeed {
  // The state the class chain shares. SessionTab (session-tab.js) builds it in its constructor;
  // declaring it here, at the root, lets the type checker see one shape for all three classes.
  /** @type {any} */ ctx;
  /** @type {string | null} */ ws = null;
  /** @type {string} */ sessionChoice;
  /** @type {SessionStream | null} */ stream = null;
  /** @type {string | null} */ view = null;
  /** @type {import("./timeline.js").Timeline} */ timeline;
  /** @type {import("./decision-card.js").DecisionList} */ decisions;
  /** @type {import("./session-review.js").SessionReview} */ review;
  /** @type {import("./indexing-note.js").IndexingNote} */ indexing;
  /** @type {HTMLElement} */ panel;
  /** @type {HTMLElement} */ banner;
  /** @type {HTMLElement} */ bannerText;
  /** @type {HTMLButtonElement} */ bannerButton;
  /** @type {HTMLElement} */ stateChip;
  /** @type {HTMLElement} */ mismatchBanner;
  /** @type {HTMLElement} */ demoBanner;
  /** @type {HTMLElement} */ browserChip;
  /** @type {HTMLButtonElement} */ listButton;
  /** @type {HTMLElement} */ listButtonText;
  /** @type {HTMLElement} */ autoBadge;
  /** @type {import("./session-list.js").SessionList} */ list;
  /** @type {any[]} */ workspaces = [];
  /** @type {any[]} */ sessions = [];
  /** @type {string | null} */ session = null;
  /** @type {string} */ wsChoice;

  // Defined further down the chain; stated here so the stream half can call them.
  /** Show a full-panel state (session-tab.js). @param {string} _view @param {{code: string, message: string} | null} [_error] @returns {Promise<void>} */
  async _state(_view, _error = null) {
    throw new Error("SessionTab defines _state");
  }

  /** Reload the session list (session-choice.js). @returns {Promise<boolean>} */
  async _loadSessions() {
    throw new Error("SessionChoice defines _loadSessions");
  }

  _startStream() {
    this._stopStream();
    this.timeline.reset();
    this._state("timeline");
    this.stream = new SessionStream({
      workspace: this.ws,
      session: this.sessionChoice === AUTO ? null : this.sessionChoice,
      on: {
        message: (type, data) => this._onMessage(type, data),
        state: (state, info) => this._onStreamState(state, info),
      },
    });
    this.stream.start();
  }

  _stopStream() {
    if (this.stream) this.stream.stop();
    this.stream = null;
    this._banner(null);
  }

  _onMessage(type, data) {
    switch (type) {
      case "hello":
        this.session = data.session || this.session;
        this.decisions.refresh();
        break;
      case "snapshot":
        if (data.session) this.session = data.session;
        this.timeline.load(Array.isArray(data.items) ? data.items : [], data.total, data.skipped_bytes);
        this.review.onSnapshot(data);
        this.shown?.(true);
        this.shown = null;
        this.timeline.scroller.setAttribute("aria-label", "Session timeline");
        break;
      case "session_status":
        this._setSessionState(data.state, data.reason);
        if (data.session && data.session !== this.session) {
          this.session = data.session;
          this._loadSessions();
        }
        break;
      case "protocol_mismatch":
        this._protocolMismatch(data.server);
        break;
      default:
        if (!CONTROL.has(type)) this.timeline.add(data);
    }
  }

  _onStreamState(state, info) {
    clearInterval(this.countdown);
    this.panel.dataset.stream = state;
    if (state === "live" || state === "stopped" || state === "idle") {
      this._banner(null);
      return;
    }
    if (state === "connecting") {
      this._banner(null);
      return;
    }
    // reconnecting
    if (info.now) {
      this._banner("Reconnecting…", false);
      return;
    }
    const tick = () => {
      const s = Math.max(0, Math.ceil((info.retryAt - Date.now()) / 1000));
      this._banner(`Connection lost — reconnecting in ${s} s (attempt ${info.attempt})`, true);
    };
    tick();
    this.countdown = setInterval(tick, 1000);
  }

  _banner(text, canRetry = false) {
    if (!text) {
      this.banner.hidden = true;
      this.banner.classList.remove("reconnecting");
      return;
    }
    this.banner.hidden = false;
    this.banner.classList.add("reconnecting");
    if (this.bannerText.textContent !== text) this.bannerText.textContent = text;
    this.bannerButton.hidden = !canRetry;
  }

  _setSessionState(state, reason) {
    if (!state) return;
    this.stateChip.hidden = false;
    setText(this.stateChip, reason ? `${state} · ${reason}` : state); // "ended · file removed"
    this.stateChip.className = `chip session-state st-${state.replace(/[^a-z]/g, "")}`;
  }

  _protocolMismatch(serverProtocol) {
    this.mismatch = serverProtocol;
    this._stopStream();
    this.mismatchBanner.hidden = false;
    this.mismatchBanner.replaceChildren(
      icon("alert"),
      h(
        "span",
        {},
        h("strong", { text: "Protocol mismatch. " }),
        `The server speaks protocol ${serverProtocol ?? "?"}, this extension speaks ${PROTOCOL_VERSION}. `,
        "Update the older of the two (",
        h("code", { text: "pip install -U sidemirror" }),
        " or reload the extension).",
      ),
    );
    if (this.view !== "timeline") this._state("error", { code: "protocol_mismatch", message: "Protocol mismatch" });
  }
}
