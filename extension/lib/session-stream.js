// A resumable session stream (DESIGN §3) over EventSource with single-use tickets.
//
// EventSource's own reconnection would reuse a spent ticket, so every error closes the source and
// this class reconnects itself with capped exponential backoff, fetching a fresh ticket and passing
// the last id it saw as `last_event_id`. The server then replays exactly the items after it (or
// sends `reset` + `snapshot`), so nothing is duplicated or lost across drops and server restarts.

import { ApiError, api, checkNow, connection, path } from "./client.js";
import { EVENT_TYPES, PROTOCOL_VERSION } from "./protocol.gen.js";

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15000;

export class SessionStream {
  /**
   * @param {object} opts
   * @param {string} opts.workspace  workspace id
   * @param {string|null} opts.session  session id, or null to follow the workspace's latest
   * @param {number} [opts.limit]  snapshot size
   * @param {object} opts.on  handlers: message(type, data), state(state, info)
   */
  constructor({ workspace, session = null, limit = 500, on }) {
    this.workspace = workspace;
    this.session = session;
    this.limit = limit;
    this.on = on;
    this.lastId = null;
    this.attempt = 0;
    this.source = null;
    this.timer = null;
    this.stopped = false;
    this.state = "idle";
  }

  start() {
    this.stopped = false;
    this._connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = null;
    this._close();
    this._setState("stopped");
  }

  /** Skip the backoff wait and reconnect now. */
  retryNow() {
    if (this.stopped || this.state === "live" || this.state === "connecting") return;
    clearTimeout(this.timer);
    this.timer = null;
    this._connect();
  }

  _setState(state, info = {}) {
    this.state = state;
    this.on.state?.(state, info);
  }

  _close() {
    if (this.source) {
      this.source.close();
      this.source = null;
    }
  }

  async _connect() {
    if (this.stopped) return;
    this._close();
    this._setState(this.attempt === 0 && !this.lastId ? "connecting" : "reconnecting", { attempt: this.attempt, now: true });
    let url;
    try {
      url = await this._url();
    } catch (err) {
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) {
        await checkNow().catch(() => {}); // re-pair, then retry
      } else if (err instanceof ApiError && err.status === 0) {
        checkNow().catch(() => {}); // rediscover (the server may have moved port)
      }
      this._scheduleRetry(err);
      return;
    }
    if (this.stopped) return;
    const source = new EventSource(url);
    this.source = source;
    for (const type of EVENT_TYPES) {
      source.addEventListener(type, (ev) => this._onMessage(source, type, ev));
    }
    source.onerror = () => {
      if (source !== this.source) return;
      this._close();
      this._scheduleRetry(new Error("stream interrupted"));
    };
  }

  async _url() {
    const conn = await connection();
    const { ticket } = await api(path.ticket(), { method: "POST", body: {} });
    const params = new URLSearchParams();
    if (this.session) params.set("session", this.session);
    params.set("limit", String(this.limit));
    if (this.lastId) params.set("last_event_id", this.lastId);
    params.set("ticket", ticket);
    return `${conn.base}${path.stream(this.workspace)}?${params}`;
  }

  _scheduleRetry(err) {
    if (this.stopped) return;
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempt);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.attempt += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this._connect();
    }, delay);
    this._setState("reconnecting", { attempt: this.attempt, delayMs: delay, retryAt: Date.now() + delay, error: err });
  }

  _onMessage(source, type, ev) {
    if (source !== this.source) return;
    let data;
    try {
      data = JSON.parse(ev.data);
    } catch {
      console.warn("sidemirror: unparseable stream message", type);
      return;
    }
    if (type === "hello") {
      if (data.protocol !== PROTOCOL_VERSION) {
        this.stop();
        this.on.message("protocol_mismatch", { server: data.protocol, extension: PROTOCOL_VERSION });
        return;
      }
      this.attempt = 0;
      this._setState("live", { version: data.version });
    } else if (type === "snapshot") {
      this.lastId = data.cursor || null;
    } else if (type === "reset") {
      this.lastId = null;
    } else if (ev.lastEventId && type !== "session_status") {
      this.lastId = ev.lastEventId;
    }
    this.on.message(type, data);
  }
}
