// Extension pages (side panel, popup) → service worker messages and server requests.
// Pages read the port and token the worker keeps in chrome.storage, then talk to the server
// directly, so they keep working while Chrome has the worker stopped.
//
// The worker sends the token only to a server that proved it holds it (lib/worker/identity.js).
// A page that saw its server fail (a dropped stream, a refused request, a 401) cannot know who
// answers on that port now, so it asks the worker to check again, and until that check is done
// no request of this page carries the token (`connection` waits for it).

import { KEYS, MSG, PANEL_HEADER, baseUrl } from "../shared/config.js";

/** Send a message to the service worker; resolves to `data` or throws the worker's error. */
export async function send(type, payload = {}) {
  const reply = await chrome.runtime.sendMessage({ type, ...payload });
  if (!reply) throw new Error(`no reply to ${type}`);
  if (!reply.ok) throw Object.assign(new Error(reply.error?.message || "failed"), reply.error || {});
  return reply.data;
}

export async function readStatus() {
  const got = await chrome.storage.session.get(KEYS.status);
  return got[KEYS.status] || null;
}

let checking = null; // this page's pending re-check: token use waits for it

/** Ask the worker to (re)check the server now; resolves to the fresh status. Until it does,
 * this page sends no token. Overlapping calls share one check. */
export function checkNow() {
  checking ||= send(MSG.checkNow, { fresh: true }).finally(() => {
    checking = null;
  });
  return checking;
}

/** Calls `fn(status)` whenever the worker publishes a new status. Returns an unsubscribe. */
export function onStatus(fn) {
  const listener = (changes, area) => {
    if (area === "session" && changes[KEYS.status]) fn(changes[KEYS.status].newValue || null);
  };
  chrome.storage.onChanged.addListener(listener);
  return () => chrome.storage.onChanged.removeListener(listener);
}

export class ApiError extends Error {
  constructor(status, code, message, detail = {}) {
    super(message);
    this.status = status; // 0 = network error (server unreachable)
    this.code = code;
    this.detail = detail; // the server's whole `error` object (e.g. a decision's `outcome`)
  }
}

/** The current {port, token, panel, base} or throws ApiError(0, "not_connected"). `panel` is the
 * panel credential (null for a token pasted by hand, which reads but cannot decide). */
export async function connection() {
  if (checking) await checking.catch(() => {});
  const got = await chrome.storage.session.get([KEYS.status, KEYS.token]);
  const status = /** @type {import("../shared/config.js").ConnectionStatus | undefined} */ (got[KEYS.status]);
  const stored = /** @type {import("../shared/config.js").StoredToken | undefined} */ (got[KEYS.token]);
  const token = stored?.value;
  if (!status || status.state !== "connected" || !status.port || !token) {
    throw new ApiError(0, "not_connected", "not connected to the Sidemirror server");
  }
  return { port: status.port, token, panel: stored?.panel || null, base: baseUrl(status.port), status };
}

/** An authenticated JSON request to the server. A request that changes something (any method
 * but GET) also carries the panel credential: deciding and answering need it (`@panel` routes). */
/**
 * @param {string} path
 * @param {{method?: string, body?: unknown, signal?: AbortSignal}} [options]
 */
export async function api(path, { method = "GET", body = undefined, signal = undefined } = {}) {
  const res = await request(path, { method, body, signal: signal || AbortSignal.timeout(10000) });
  return res.json();
}

/** A file the server sends (an export): the response, its body not read yet. No time limit
 * unless `signal` sets one: a long session's file takes its time. */
export function fetchFile(path, { signal = undefined } = {}) {
  return request(path, { signal });
}

/**
 * The authenticated request under `api` and `fetchFile`; an answer that is not 2xx is thrown.
 * @param {string} path
 * @param {{method?: string, body?: unknown, signal?: AbortSignal}} options
 */
async function request(path, { method = "GET", body = undefined, signal = undefined }) {
  const conn = await connection();
  let res;
  try {
    res = await fetch(conn.base + path, {
      method,
      headers: {
        Authorization: `Bearer ${conn.token}`,
        ...(method !== "GET" && conn.panel ? { [PANEL_HEADER]: conn.panel } : {}),
        ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      cache: "no-store",
      credentials: "omit",
      signal,
    });
  } catch (err) {
    checkNow().catch(() => {}); // who answers on that port now is unknown: no token until checked
    throw new ApiError(0, "unreachable", `server unreachable (${err.message})`);
  }
  if (res.status === 401 || res.status === 403) checkNow().catch(() => {});
  if (!res.ok) {
    let code = `http_${res.status}`;
    let message = `${res.status} ${res.statusText}`.trim();
    let detail = {};
    try {
      const data = await res.json();
      if (data?.error) {
        code = String(data.error.code || code);
        message = String(data.error.message || message);
        detail = data.error;
      }
    } catch {
      /* not JSON */
    }
    throw new ApiError(res.status, code, message, detail);
  }
  return res;
}

export const path = {
  workspaces: () => "/api/workspaces",
  sessions: (ws) => `/workspace/${encodeURIComponent(ws)}/sessions`,
  allSessions: () => "/api/sessions",
  item: (ws, id) => `/workspace/${encodeURIComponent(ws)}/session/items/${encodeURIComponent(id)}`,
  stream: (ws) => `/workspace/${encodeURIComponent(ws)}/session/stream`,
  ticket: () => "/api/ticket",
  activityStream: () => "/activity/stream",
  latestWorkspace: () => "/api/activity/latest-workspace",
  refs: (url) => `/api/refs?url=${encodeURIComponent(url)}`,
  mcp: () => "/mcp",
  attentionStream: () => "/api/attention/stream",
  decisions: () => "/api/decisions",
  decision: (id) => `/api/decisions/${encodeURIComponent(id)}`,
  decisionBatch: () => "/api/decisions/batch",
  reveal: (id) => `/api/decisions/${encodeURIComponent(id)}/reveal`,
};
