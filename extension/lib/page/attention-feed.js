// Every live session's state, from `GET /api/attention/stream` (docs/api.md): a `sessions`
// listing first (and again after a reconnect or when this page fell behind), then one `state`
// event per change. One feed per page, shared by the Sessions view, the decision cards and the
// session tab, and one connection shared by all pages (a host gets six; reconnection, tickets and
// sharing come from lib/page/resumable-stream.js).

import { path } from "./client.js";
import { ResumableStream } from "./resumable-stream.js";

class AttentionStream extends ResumableStream {
  constructor(on) {
    super({ path: path.attentionStream(), events: ["sessions", "state"], on });
  }
}

/** One session's key in a feed's map. */
export const sessionKey = (s) => `${s.workspace}\u0000${s.session}`;

export class AttentionFeed {
  constructor() {
    this.sessions = new Map(); // key → {workspace, session, state, reason, since, title, ...}
    this.listeners = new Set();
    this.stream = new AttentionStream({
      message: (type, data) => this._message(type, data),
      state: () => {},
    });
  }

  /** `fn(sessions, change)` now and on every change; returns an unsubscribe. */
  subscribe(fn) {
    this.listeners.add(fn);
    if (this.stream.stopped) this.stream.start();
    fn(this.list(), null);
    return () => this.listeners.delete(fn);
  }

  list() {
    return [...this.sessions.values()].filter((s) => s.state !== "ended");
  }

  _message(type, data) {
    let change = null;
    if (type === "sessions") {
      this.sessions = new Map((data.sessions || []).map((s) => [sessionKey(s), s]));
    } else if (type === "state") {
      this.sessions.set(sessionKey(data), data);
      change = data;
    }
    for (const fn of this.listeners) fn(this.list(), change);
  }
}

let shared = null;

/** This page's one feed. */
export function attentionFeed() {
  shared ||= new AttentionFeed();
  return shared;
}
