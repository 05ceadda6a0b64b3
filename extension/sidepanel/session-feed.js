// The live stream of the session the Session tab shows (session-tab.js): started and stopped as
// the choice changes (session-choice.js), its messages sent to the timeline, and what the
// connection says about itself (the reconnect banner, the session's state chip, a protocol
// mismatch). The tab builds the elements and owns the timeline; this is its stream half.

import { h } from "../lib/page/dom.js";
import { CONTROL_TYPES, PROTOCOL_VERSION } from "../lib/shared/protocol.gen.js";
import { SessionStream } from "../lib/page/session-stream.js";
import { icon } from "./icons.js";
import { paintStateChip } from "./state-chip.js";
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
  /** Counts the user's choices, so a list read begun before one does not undo it. */ choiceSeq = 0;
  /** @type {any[]} the sessions listing of the workspace shown (session-choice.js) */ sessions = [];
  /** @type {string | null} */ told = null;
  /** @type {SessionStream | null} */ stream = null;
  /** @type {string | null} */ view = null;
  /** @type {import("./timeline.js").Timeline} */ timeline;
  /** @type {import("./decision-card.js").DecisionList} */ decisions;
  /** @type {import("./session-review.js").SessionReview} */ review;
  /** @type {import("./note-composer.js").NoteComposer} */ notes;
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
    this.stateChip.hidden = true; // another session's state until this one's is known
    this.told = null; // the session whose state this stream said (session_status)
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
        this.notes?.refresh();
        break;
      case "snapshot":
        if (data.session) this.session = data.session;
        this.timeline.load(Array.isArray(data.items) ? data.items : [], data.total, data.skipped_bytes);
        // The stream tells only changes of state: until one comes, the chip shows the state the
        // sessions listing (loaded just before the stream) gave this session.
        if (this.told !== this.session) this._setSessionState(this.sessions.find((s) => s.id === this.session) || {});
        this.review.onSnapshot(data);
        this.shown?.(true);
        this.shown = null;
        this.timeline.scroller.setAttribute("aria-label", "Session timeline");
        break;
      case "session_status":
        this.told = data.session || this.session;
        this._setSessionState(data);
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

  _setSessionState(status) {
    if (!status.state) return;
    this.stateChip.hidden = false;
    const { state, reason } = status;
    // "ended · file removed"; outlined dashed when inferred, as in the Sessions view.
    paintStateChip(this.stateChip, status, reason ? `${state} · ${reason}` : state, "chip session-state");
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
