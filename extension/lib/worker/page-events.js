// The service worker's half of page events (content/page-events.js): what a page on an overlay
// site showed as errors, turned into activity entries (`source: "page"`) and posted to the
// server with the token this worker holds. Entries are filed under the workspace whose agent
// acted in the browser last, so the server can link them to the tool call that caused them.

import { baseUrl } from "../shared/config.js";

const MAX_EVENTS = 50; // per message; content/page-events.js batches far fewer
const WORKSPACE_MS = 5000;

/** The activity entry for one page event, or null when it is not one we know. */
export function entryOf(event, sender) {
  const base = { url: sender.url, tab_id: sender.tab?.id ?? null, source: "page", status: "error", ts: event.ts };
  const frame = event.frame ? [String(event.frame)] : [];
  if (event.kind === "console")
    return { ...base, type: "console", command: "console.error", error: event.text || "(empty)", args: frame };
  if (event.kind === "exception")
    return { ...base, type: "error", command: "exception", error: event.text || "uncaught exception", args: frame };
  if (event.kind === "request") {
    const args = [event.method || "GET", event.url || ""];
    if (Number.isInteger(event.status)) args.push(String(event.status));
    return { ...base, type: "error", command: "request.failed", error: event.text || "failed", args };
  }
  return null;
}

export class PageEventReporter {
  /** @param {() => Promise<{port: number, token: string} | null>} current  the live connection */
  constructor(current) {
    this.current = current;
    this.workspace = { at: 0, id: null };
  }

  async report(events, sender) {
    const conn = await this.current();
    if (!conn || !Array.isArray(events)) return { reported: 0 };
    const workspace = await this._workspace(conn);
    /** @type {Array<ReturnType<typeof entryOf> & {workspace?: string}>} */
    const entries = events
      .slice(0, MAX_EVENTS)
      .map((e) => entryOf(e || {}, sender))
      .filter(Boolean);
    if (!entries.length) return { reported: 0 };
    for (const entry of entries) if (workspace) entry.workspace = workspace;
    const res = await this._fetch(conn, "/api/activity", {
      method: "POST",
      body: JSON.stringify(entries),
      headers: { "Content-Type": "application/json" },
    });
    return { reported: res.ok ? entries.length : 0 };
  }

  async _workspace(conn) {
    if (Date.now() - this.workspace.at < WORKSPACE_MS) return this.workspace.id;
    let id = null;
    try {
      const res = await this._fetch(conn, "/api/activity/latest-workspace");
      if (res.ok) id = (await res.json())?.workspace ?? null;
    } catch {
      /* unscoped: still shown in the Activity tab, only not linked */
    }
    this.workspace = { at: Date.now(), id };
    return id;
  }

  _fetch(conn, path, init = {}) {
    return fetch(`${baseUrl(conn.port)}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${conn.token}`, ...(init.headers || {}) },
      cache: "no-store",
      credentials: "omit",
      signal: AbortSignal.timeout(4000),
    });
  }
}
