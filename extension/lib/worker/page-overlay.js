// The service worker's half of the page overlay (content/content-script.js).
//
// A content script asks "anything for my page?"; the worker, which holds the token, answers with
// the refs the server knows for the sender tab's URL (GET /api/refs) and the latest command the
// agent ran on one of those refs there (MCP `sidemirror_get_activity`: the HTTP API has no
// request/response read of the activity log). The content script never sees the token, and the
// URL asked about is always the sender's own (from `sender`, not from the message).

import { baseUrl } from "../shared/config.js";
import { McpClient } from "../shared/mcp-client.js";

const CACHE_MS = 800; // several tabs / frames on one URL share one lookup
const ACTIVITY_LIMIT = 200;

/** Page identity as the server keys refs: the URL without its fragment. */
export function pageKey(url) {
  try {
    const u = new URL(url);
    u.hash = "";
    return u.href;
  } catch {
    return String(url || "");
  }
}

/** The ref an argument names, if it is one of `refs` (`e5`, `@e5`, `ref=e5`, `[ref=e5]`). */
export function refOfArg(arg, refSet) {
  const text = String(arg ?? "").trim();
  const m = /^(?:\[?ref\s*=\s*)?@?([\w:-]+)\]?$/.exec(text);
  if (m && refSet.has(m[1])) return m[1];
  return refSet.has(text) ? text : null;
}

/** The latest `command_end` on this page whose arguments name a known ref. */
export function lastActed(entries, url, refs) {
  const key = pageKey(url);
  const refSet = new Set(refs.map((r) => r.ref).filter(Boolean));
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i];
    if (e.type !== "command_end" || !e.url || pageKey(e.url) !== key) continue;
    for (const arg of e.args || []) {
      const ref = refOfArg(arg, refSet);
      if (ref) return { id: e.id, ref, command: e.command, status: e.status || (e.error ? "error" : "ok"), ts: e.ts };
    }
  }
  return null;
}

export class PageOverlaySource {
  /** @param {() => Promise<{port: number, token: string} | null>} current  the live connection */
  constructor(current) {
    this.current = current;
    this.cache = new Map(); // pageKey → {at, promise}
    this.mcp = new McpClient(async () => {
      const c = await this.current();
      if (!c) throw new Error("not connected");
      return { base: baseUrl(c.port), token: c.token };
    });
  }

  /** {connected, refs, acted} for a page URL; never throws. */
  lookup(url) {
    const key = pageKey(url);
    const hit = this.cache.get(key);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.promise;
    const promise = this._lookup(url);
    this.cache.set(key, { at: Date.now(), promise });
    if (this.cache.size > 50) this.cache.delete(this.cache.keys().next().value);
    return promise;
  }

  async _lookup(url) {
    const conn = await this.current();
    if (!conn) return { connected: false, refs: [], acted: null };
    let body;
    try {
      const res = await fetch(`${baseUrl(conn.port)}/api/refs?url=${encodeURIComponent(url)}`, {
        headers: { Authorization: `Bearer ${conn.token}` },
        cache: "no-store",
        credentials: "omit",
        signal: AbortSignal.timeout(4000),
      });
      if (!res.ok) return { connected: false, refs: [], acted: null, error: `refs: HTTP ${res.status}` };
      body = await res.json();
    } catch (err) {
      return { connected: false, refs: [], acted: null, error: String(err.message || err), unreachable: true };
    }
    const refs = (Array.isArray(body?.refs) ? body.refs : []).map((r) => ({
      ref: String(r.ref ?? ""),
      role: r.role == null ? null : String(r.role),
      name: r.name == null ? null : String(r.name),
      selector: r.selector == null ? null : String(r.selector),
    }));
    if (!refs.length) return { connected: true, refs: [], acted: null };
    let acted = null;
    try {
      const args = { limit: ACTIVITY_LIMIT };
      if (body.workspace) args.workspace = body.workspace;
      const result = await this.mcp.callTool("sidemirror_get_activity", args);
      acted = lastActed(activityEntries(result), url, refs);
    } catch (err) {
      console.warn("sidemirror: activity lookup failed", err.message);
    }
    return { connected: true, refs, acted, refsId: body.id ?? null };
  }
}

function activityEntries(result) {
  if (Array.isArray(result?.structuredContent?.entries)) return result.structuredContent.entries;
  for (const c of result?.content || []) {
    if (c.type !== "text") continue;
    try {
      const parsed = JSON.parse(c.text);
      if (Array.isArray(parsed?.entries)) return parsed.entries;
    } catch {
      /* not JSON */
    }
  }
  return [];
}
