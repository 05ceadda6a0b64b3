// A resumable SSE stream from the companion server, over EventSource with single-use tickets.
//
// EventSource's own reconnection would reuse a spent ticket, so every error closes the source and
// this class reconnects itself with capped exponential backoff (with jitter), fetching a fresh
// ticket and passing the last id it saw as `last_event_id`. While the server is down, the page
// also watches its `/health` (lib/page/server-return.js), so a server back on its port is
// reconnected to within a fraction of a second, not at the end of a long backoff wait. The server then replays exactly what
// came after it (or says it can't: `reset`/`snapshot` for sessions, `gap` for activity), so
// nothing is duplicated or lost across drops and server restarts.
//
// Subclasses (lib/page/session-stream.js, lib/page/activity-stream.js) say which path, which
// query parameters and which event names; they may override `_onControl` to track cursors that are
// not carried on `id:` lines.
//
// Pages that want the same stream share one connection (lib/page/stream-share.js): Chromium gives
// a host only 6 HTTP/1.1 connections, and each open EventSource holds one.

import { ApiError, api, checkNow, connection, path as paths } from "./client.js";
import { whenServerBack } from "./server-return.js";
import { StreamShare, canShare } from "./stream-share.js";

export const BACKOFF_MIN_MS = 500;
export const BACKOFF_MAX_MS = 15000;

/** Capped exponential backoff with ±20 % jitter; `attempt` counts from 0. */
export function backoffDelay(attempt, min = BACKOFF_MIN_MS, max = BACKOFF_MAX_MS) {
  const base = Math.min(max, min * 2 ** attempt);
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export class ResumableStream {
  /**
   * @param {object} opts
   * @param {string} opts.path  server path of the SSE endpoint
   * @param {readonly string[]} opts.events  SSE event names to listen to
   * @param {object} opts.on  handlers: message(type, data, ev), state(state, info)
   * @param {boolean} [opts.liveOnOpen]  "live" when the connection opens (else a subclass says so)
   * @param {boolean} [opts.share]  share one connection with other pages (default: where possible)
   */
  constructor({ path, events, on, liveOnOpen = true, share = canShare() }) {
    this.path = path;
    this.events = events;
    this.on = on;
    this.liveOnOpen = liveOnOpen;
    this.lastId = null;
    this.attempt = 0;
    this.source = null;
    this.timer = null;
    this.stopped = true;
    this.state = "idle";
    this.shareable = share;
    this.share = null;
    this.port = null; // where the server was last reached (watched while it is down)
    this.unwatch = null; // cancels the wait for the server's return
    this.opening = false; // a connection is being set up (one at a time)
  }

  /** Query parameters besides `last_event_id` and `ticket` (override). */
  params() {
    return {};
  }

  start() {
    this.stopped = false;
    if (this.shareable) {
      this.share?.close();
      // Connects through `_connect` once this page leads; until then it follows the leader.
      this.share = new StreamShare(this, this._shareKey());
    } else {
      this._connect();
    }
  }

  stop() {
    this.stopped = true;
    this.share?.close();
    this.share = null;
    clearTimeout(this.timer);
    this.timer = null;
    this._unwatch();
    this._close();
    this._setState("stopped");
  }

  /** Skip the backoff wait and reconnect now. */
  retryNow() {
    if (this.stopped || this.state === "live" || this.state === "connecting") return;
    if (this.share && !this.share.leader) {
      this.share.retryNow();
      return;
    }
    clearTimeout(this.timer);
    this.timer = null;
    this._connect();
  }

  /** Mark the stream live (subclasses that wait for a hello call this). */
  _live(info = {}) {
    this.attempt = 0;
    this._setState("live", info);
  }

  _setState(state, info = {}) {
    this.state = state;
    if (this.share?.leader) this.share.relayState(state, info);
    this.on.state?.(state, info);
  }

  /** What identifies this stream among pages: the path and the parameters. */
  _shareKey() {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(this.params()).sort())
      if (v !== null && v !== undefined && v !== "") params.set(k, String(v));
    return `${this.path}?${params}`;
  }

  /** A message relayed by the leading page, handled as if it came from our own connection. */
  _receive(entry) {
    const ev = { lastEventId: entry.lastEventId };
    if (this._onControl(entry.type, entry.data, ev) === false) return;
    this.on.message(entry.type, entry.data, ev);
  }

  /** Bound the replay log kept for pages that join later (override; default: keep it all). */
  _trimReplay(log) {
    return log;
  }

  _close() {
    if (this.source) {
      this.source.close();
      this.source = null;
    }
  }

  async _connect() {
    if (this.stopped || (this.share && !this.share.leader) || this.opening) return;
    this._unwatch();
    this._close();
    this._setState(this.attempt === 0 && !this.lastId ? "connecting" : "reconnecting", {
      attempt: this.attempt,
      now: true,
    });
    let url;
    this.opening = true;
    try {
      url = await this._url();
    } catch (err) {
      if (err instanceof ApiError && (err.status === 0 || err.status === 401 || err.status === 403)) {
        // Re-pair, or find the server again (it may have moved port, or another may hold the
        // port now): the token is used again only once the worker has checked who answers there.
        await checkNow().catch(() => {});
      }
      this._scheduleRetry(err);
      return;
    } finally {
      this.opening = false;
    }
    if (this.stopped) return;
    const source = new EventSource(url);
    this.source = source;
    for (const type of this.events) {
      source.addEventListener(type, (ev) => this._onEvent(source, type, ev));
    }
    source.onopen = () => {
      if (source === this.source && this.liveOnOpen) this._live();
    };
    source.onerror = () => {
      if (source !== this.source) return;
      checkNow().catch(() => {}); // the server dropped us: no token until the worker checked again
      this._close();
      this._scheduleRetry(new Error("stream interrupted"));
    };
  }

  async _url() {
    const conn = await connection();
    this.port = conn.port;
    const { ticket } = await api(paths.ticket(), { method: "POST", body: {} });
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(this.params()))
      if (v !== null && v !== undefined && v !== "") params.set(k, String(v));
    if (this.lastId) params.set("last_event_id", this.lastId);
    params.set("ticket", ticket);
    return `${conn.base}${this.path}?${params}`;
  }

  _scheduleRetry(err) {
    if (this.stopped) return;
    const delay = backoffDelay(this.attempt);
    this.attempt += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this._connect();
    }, delay);
    this._setState("reconnecting", { attempt: this.attempt, delayMs: delay, retryAt: Date.now() + delay, error: err });
    this._watchServer();
  }

  /** While waiting out the backoff, watch the port: a server back there ends the wait. */
  _watchServer() {
    if (this.unwatch || this.port === null) return;
    this.unwatch = whenServerBack(this.port, () => {
      this.unwatch = null;
      this._serverBack();
    });
  }

  _unwatch() {
    this.unwatch?.();
    this.unwatch = null;
  }

  /** The server answers again: the worker checks who it is (the token goes only to a server
   * that proves it holds it), then this connects without waiting out the backoff. */
  async _serverBack() {
    await checkNow().catch(() => {});
    if (this.stopped || this.timer === null) return; // connected or stopped meanwhile
    clearTimeout(this.timer);
    this.timer = null;
    this._connect();
  }

  _onEvent(source, type, ev) {
    if (source !== this.source) return;
    let data;
    try {
      data = JSON.parse(ev.data);
    } catch {
      console.warn("sidemirror: unparseable stream message", type);
      return;
    }
    if (this._onControl(type, data, ev) === false) return;
    if (this.share?.leader) this.share.relayMessage(type, data, ev.lastEventId);
    this.on.message(type, data, ev);
  }

  /** Track the cursor; return false to swallow the message. Default: the `id:` line. */
  _onControl(type, data, ev) {
    if (ev.lastEventId) this.lastId = ev.lastEventId;
    return true;
  }
}
