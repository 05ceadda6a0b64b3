// One server stream shared by every extension page that wants the same one.
//
// Why: an open EventSource holds one HTTP/1.1 connection for as long as it lives, and Chromium
// allows 6 connections per host and profile. One stream per side panel meant a 7th panel (or a
// 4th with its Activity tab shown) waited forever for a connection and never updated.
//
// How: pages that want the same stream (same path and parameters: the share key) elect a leader
// with the Web Locks API. Only the leader opens the EventSource — with tickets, backoff and resume
// exactly as before (lib/page/resumable-stream.js) — and relays every message and state change over
// a BroadcastChannel. Each page keeps the same replay log: the last `hello` and `snapshot` and
// every message since (a stream may trim it further, see ResumableStream._trimReplay). A page that
// joins later asks the leader for that log (after the last id it saw, if it has one) and so starts
// from what a connection of its own would have given it. When the leader's page closes or switches
// session, its lock is released and the next waiting page takes over: it resumes with the last id
// it saw — the same as everyone's, since they all saw the same relayed messages — so the server
// replays exactly what came after it, nothing lost and nothing doubled (`seq` drops any repeat).
//
// Why not the service worker as the hub: Chrome stops it whenever it likes (it has no EventSource
// either), and the panels must keep streaming while it is stopped. Why not a second host name
// (localhost next to 127.0.0.1) for a second pool: that only moves the limit to 12.

const STATES = new Set(["connecting", "reconnecting", "live"]);

/** True where pages can share (extension pages). Elsewhere each stream connects on its own. */
export function canShare() {
  return typeof navigator !== "undefined" && Boolean(navigator.locks) && typeof BroadcastChannel === "function";
}

export class StreamShare {
  /**
   * @param {object} stream  the ResumableStream this page uses; the share calls its `_connect`,
   *   `retryNow`, `_receive`, `_setState` and `_trimReplay`, and reads `lastId` and `state`.
   * @param {string} key  what identifies the stream (path and parameters)
   */
  constructor(stream, key) {
    this.stream = stream;
    this.key = key;
    this.id = crypto.randomUUID();
    this.leader = false;
    this.synced = false; // holds the leader's log (a fresh leader is synced by definition)
    this.closed = false;
    this.log = []; // {seq, type, data, lastEventId, cursor}
    this.seq = 0; // last relayed message this page has
    this.lastState = null; // {state, info} of the real connection
    this.release = null;
    this.abort = new AbortController();
    this.channel = new BroadcastChannel(`sidemirror-stream ${key}`);
    this.channel.onmessage = (ev) => this._onMessage(ev.data);
    navigator.locks
      .request(`sidemirror-stream ${key}`, { signal: this.abort.signal }, () => this._lead())
      .catch(() => {}); // aborted: this page stopped before its turn came
    this._join();
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    this.release?.(); // a leader gives the lock to the next page in line
    this.channel.close();
  }

  /** A follower's "Retry now" goes to the leader, the only one with a connection. */
  retryNow() {
    this._post({ kind: "retry" });
  }

  // --- leader side (called by the stream) ---

  relayMessage(type, data, lastEventId) {
    const entry = { seq: this.seq + 1, type, data, lastEventId: lastEventId || "", cursor: this.stream.lastId };
    this._append(entry);
    this._post({ kind: "msg", entry });
  }

  relayState(state, info) {
    if (!STATES.has(state)) return; // "stopped" is this page's own business
    this.lastState = { state, info: plainInfo(info) };
    this._post({ kind: "state", ...this.lastState });
  }

  // --- internals ---

  _lead() {
    if (this.closed) return undefined; // releases the lock at once
    this.leader = true;
    this.synced = true;
    this._post({ kind: "leader" }); // followers that never got a log ask this page
    this.stream._connect(); // after this page's last id: the server replays what came after it
    return new Promise((resolve) => {
      this.release = resolve;
    });
  }

  _join() {
    this._post({ kind: "join", from: this.id, lastId: this.stream.lastId });
  }

  _append(entry) {
    this.seq = entry.seq;
    if (entry.type === "snapshot") {
      // A snapshot replaces everything before it; keep the hello that announced it.
      const hello = this.log.findLast((e) => e.type === "hello");
      this.log = hello ? [hello] : [];
    }
    this.log.push(entry);
    this.log = this.stream._trimReplay(this.log);
  }

  _onMessage(m) {
    if (this.closed || !m || typeof m !== "object") return;
    switch (m.kind) {
      case "join": {
        if (!this.leader) return;
        let from = 0;
        if (m.lastId) {
          const i = this.log.findLastIndex((e) => e.cursor === m.lastId);
          if (i >= 0) from = i + 1;
        }
        this._post({ kind: "replay", to: m.from, log: this.log, from, current: this.lastState });
        return;
      }
      case "leader":
        if (!this.leader && !this.synced) this._join();
        return;
      case "replay":
        if (m.to !== this.id || this.leader || this.synced) return;
        this.synced = true;
        this.log = m.log;
        this.seq = m.log.length ? m.log[m.log.length - 1].seq : 0;
        for (const entry of m.log.slice(m.from)) {
          if (this.closed) return;
          this.stream._receive(entry);
        }
        if (m.current && !this.closed) this.stream._setState(m.current.state, m.current.info);
        return;
      case "msg":
        if (this.leader || !this.synced || m.entry.seq <= this.seq) return;
        this._append(m.entry);
        this.stream._receive(m.entry);
        return;
      case "state":
        if (this.leader || !this.synced) return;
        this.lastState = { state: m.state, info: m.info };
        this.stream._setState(m.state, m.info);
        return;
      case "retry":
        if (this.leader) this.stream.retryNow();
        return;
      default:
    }
  }

  _post(message) {
    if (!this.closed) this.channel.postMessage(message);
  }
}

/** The serialisable part of a state's info (an Error need not cross the channel). */
function plainInfo(info = {}) {
  const out = {};
  for (const k of ["attempt", "delayMs", "retryAt", "now", "version"]) if (info[k] !== undefined) out[k] = info[k];
  if (info.error) out.error = { message: String(info.error.message || info.error) };
  return out;
}
