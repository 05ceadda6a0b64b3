// Constants shared by every extension context.

export const DEFAULT_PORT = 47470;
export const PORT_RANGE = Object.freeze(Array.from({ length: 10 }, (_, i) => DEFAULT_PORT + i));
export const HOST = "127.0.0.1";
export const SERVE_COMMAND = "sidemirror serve";
// The status note of a server found while it starts (its `/health` says "starting"): the worker
// waits for it to answer, and the popup says so.
export const STARTING_NOTE = "The server is starting.";

/** chrome.storage keys. `local` survives restarts; `session` is memory-only (tokens). */
export const KEYS = Object.freeze({
  port: "port", // local: the user's manual port (number): only that port is probed; absent = the range
  paired: "paired", // local: {server_id, port} of the server this extension paired with
  overlaySites: "overlaySites", // local: origins where the user turned the page overlay on
  // session: {value, panel, source: "native"|"code"|"manual", instance, server_id}. `value` is the
  // token (reads); `panel` the panel credential (decides, answers); a pasted token has none.
  token: "token",
  status: "status", // session: see lib/worker/connection.js
  alerts: "alerts", // local: notifications when a session waits or finishes (opt-in, Sessions view)
  attentionFocus: "attentionFocus", // session: {workspace, session, at} a clicked notification asks the panel to show
  waiting: "waiting", // session: how many sessions wait for the user (number; lib/worker/attention-alerts.js)
});

/**
 * What `session` storage holds under KEYS.token.
 * @typedef {object} StoredToken
 * @property {string} value the token
 * @property {string | null} [panel] the panel credential (none for a pasted token)
 * @property {string} [source] "native" | "code" | "manual"
 * @property {string | null} [instance] the server run it was checked against
 * @property {string | null} [server_id]
 */

/**
 * What `session` storage holds under KEYS.status (lib/worker/connection.js says what each means).
 * @typedef {object} ConnectionStatus
 * @property {string} state connecting | connected | not_running | other_server | error
 * @property {number | null} [port]
 * @property {Array<{port: number, server_id: string | null, version?: string}>} [offers]
 * @property {string | null} [note]
 * @property {{code: string, message: string} | null} [error]
 */

/** What `local` storage holds under KEYS.paired. @typedef {{server_id: string | null, port: number}} PairedServer */

/** Message types the service worker answers with {ok, data} | {ok: false, error}. */
export const MSG = Object.freeze({
  getStatus: "getStatus",
  checkNow: "checkNow",
  setPort: "setPort",
  setToken: "setToken",
  pairCode: "pairCode", // {code}: the one-time code `sidemirror pair` printed (lib/worker/pairing.js)
  useServer: "useServer", // {port, server_id}: the user picked a server the status offers
  setOverlay: "setOverlay", // {origin, on}: the page overlay on or off for one site
  pageOverlay: "pageOverlay", // with pageEvents, the only types a content script may send
  pageEvents: "pageEvents", // {events}: errors a page on an overlay site showed (browser-link)
});

// The header that carries the panel credential on deciding requests (docs/api.md).
export const PANEL_HEADER = "X-Sidemirror-Panel";

export const HEALTH_ALARM = "health";
export const HEALTH_PERIOD_MIN = 0.5;

export function baseUrl(port) {
  return `http://${HOST}:${port}`;
}

/** A port the user typed: an integer 1–65535, else null. */
export function parsePort(value) {
  const text = String(value ?? "").trim();
  if (!/^\d{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/** A pasted token: printable, no spaces, 16–512 characters. Returns the trimmed token or null. */
export function parseToken(value) {
  const text = String(value ?? "").trim();
  return /^[A-Za-z0-9._~+/=-]{16,512}$/.test(text) ? text : null;
}

/** A pairing code the user typed (`ABC-DEF`, any case, any separators): 6 code letters or null. */
export function parseCode(value) {
  const text = String(value ?? "")
    .toUpperCase()
    .replace(/[^0-9A-Z]/g, "");
  return /^[2-9A-HJKMNP-Z]{6}$/.test(text) ? text : null;
}
