// Alerts for sessions that need the user (worker side): the toolbar badge counts the sessions
// waiting (red when one waits for a permission, amber when only for an answer), and, when the
// user turned alerts on in the Sessions view, a notification when a session starts waiting or
// finishes while no side panel is open, for every agent and every host (forwarded ones too).
// It carries the session's name and what is asked: the question (the attention row's
// `question`), or the command (or file) of the pending permission request, read from
// `GET /api/decisions`. Clicking it opens the panel on that
// session, at that request's card.
//
// The worker reads `GET /api/attention/stream` with fetch (a service worker has no EventSource)
// while it is connected; Chrome may stop the worker at any time, and the health alarm's next
// check (service-worker.js) starts the stream again. A stream that drops is not reopened by
// itself: whoever answers on that port now has not proved who it is, so the worker checks the
// server again first (the token goes only to a server that proves it holds it), and that
// check's status starts the stream again. Texts come from the server, redacted.
//
// The count of waiting sessions is also kept in session storage (KEYS.waiting) for the popup,
// which has no stream of its own and may open at any moment.

import { KEYS, baseUrl } from "../shared/config.js";
import { waitingText } from "../shared/waiting.js";

const ALERTS_KEY = KEYS.alerts;
const FOCUS_KEY = KEYS.attentionFocus;
const RETRY_MS = 3000;
const NOTIFICATION_PREFIX = "sidemirror-attention:";

const sessions = new Map(); // "ws\0session" → latest state
let current = null; // {port, token, controller}
let onBadgeChange = () => {};
let published = null; // the count last written to storage: written again only when it changes
let onDropped = () => {};

const keyOf = (s) => `${s.workspace}\u0000${s.session}`;

/** Called with every status the worker publishes, and its token. `dropped()` asks for a fresh
 * check after the stream ended. */
export function watchAttention(status, token, badgeChanged, dropped = () => {}) {
  onBadgeChange = badgeChanged;
  onDropped = dropped;
  if (status?.state !== "connected" || !status.port || !token) {
    stop();
    return;
  }
  if (current && current.port === status.port && current.token === token) return;
  stop();
  current = { port: status.port, token, controller: new AbortController() };
  run(current);
}

function stop() {
  current?.controller.abort();
  current = null;
  if (sessions.size) {
    sessions.clear();
    changed();
  }
}

/** The sessions changed: the badge is drawn again and the popup's count kept up to date. */
function changed() {
  onBadgeChange();
  const n = waitingCount();
  if (n === published) return;
  published = n;
  chrome.storage.session.set({ [KEYS.waiting]: n }).catch((err) => {
    published = null; // written again at the next change
    console.warn("sidemirror: cannot store the waiting count", err.message);
  });
}

function waitingCount() {
  let n = 0;
  for (const s of sessions.values()) if (s.state === "waiting") n += 1;
  return n;
}

/** The badge while sessions wait, else null (the connection badge shows). */
export function waitingBadge() {
  const waiting = [...sessions.values()].filter((s) => s.state === "waiting");
  if (!waiting.length) return null;
  const permission = waiting.some((s) => s.reason === "permission");
  const n = waiting.length;
  return {
    text: String(n),
    color: permission ? "#cf222e" : "#bf8700",
    title: () => `Sidemirror — ${waitingText(n)}`,
  };
}

async function run(conn) {
  try {
    const res = await fetch(`${baseUrl(conn.port)}/api/attention/stream`, {
      headers: { Authorization: `Bearer ${conn.token}` },
      cache: "no-store",
      credentials: "omit",
      signal: conn.controller.signal,
    });
    if (!res.ok || !res.body) throw new Error(`attention stream: ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        frame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
  } catch (err) {
    if (conn.controller.signal.aborted) return;
    console.warn("sidemirror: attention stream", err.message);
  }
  if (current === conn) {
    current = null; // the next connected status starts it again
    setTimeout(() => current === null && conn.controller.signal.aborted === false && onDropped(), RETRY_MS);
  }
}

function frame(text) {
  let event = "message";
  let data = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (!data) return;
  let body;
  try {
    body = JSON.parse(data);
  } catch {
    return;
  }
  if (event === "sessions") {
    sessions.clear();
    for (const s of body.sessions || []) sessions.set(keyOf(s), s);
  } else if (event === "state") {
    const before = sessions.get(keyOf(body));
    if (body.state === "ended") sessions.delete(keyOf(body));
    else sessions.set(keyOf(body), body);
    maybeNotify(before, body);
  }
  changed();
}

async function maybeNotify(before, now) {
  const startedWaiting = now.state === "waiting" && (before?.state !== "waiting" || before?.reason !== now.reason);
  const finished = now.state === "idle" && before?.state === "running";
  if (!startedWaiting && !finished) return;
  const { [ALERTS_KEY]: on } = await chrome.storage.local.get(ALERTS_KEY);
  if (on !== true || (await panelOpen())) return;
  const request = startedWaiting && now.reason === "permission" ? await pendingOf(now) : null;
  chrome.notifications.create(notificationId(now, request), notificationText(now, request, finished));
}

/** What the notification says (plain text: Chrome draws no markup in it): the session's name,
 * the agent, and the question it asks or the command or file it asks to run, else why it waits. */
export function notificationText(row, request, finished) {
  const agent = row.agent === "codex" ? "Codex" : row.agent === "acp" ? "The agent" : "Claude";
  const where = row.workspace_name || row.workspace;
  const name = row.title || `session ${String(row.session).slice(0, 8)}`;
  let message = `${agent} finished`;
  if (!finished && request) message = `${agent} asks to run ${requestLine(request)}`;
  else if (!finished && row.reason === "input")
    message = row.question ? `${agent} asks: ${row.question}` : `${agent} waits for your answer`;
  else if (!finished) message = `${agent} wants your permission`;
  return {
    type: /** @type {const} */ ("basic"),
    iconUrl: chrome.runtime.getURL("icons/icon-128.png"),
    title: `${where} · ${name}`,
    message,
    priority: finished ? 0 : 2,
  };
}

function requestLine(request) {
  const input = request.tool_input || {};
  for (const key of ["command", "file_path", "notebook_path", "url", "path"]) {
    if (typeof input[key] === "string" && input[key]) return `${request.tool_name}: ${input[key]}`;
  }
  return String(request.tool_name);
}

/** The session's oldest pending request, if the server holds one (its input is redacted). */
async function pendingOf(row) {
  const conn = current;
  if (!conn) return null;
  try {
    const res = await fetch(`${baseUrl(conn.port)}/api/decisions`, {
      headers: { Authorization: `Bearer ${conn.token}` },
      cache: "no-store",
      credentials: "omit",
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) return null;
    const { decisions } = await res.json();
    return (decisions || []).find((d) => d.workspace === row.workspace && d.session === row.session) || null;
  } catch {
    return null;
  }
}

const notificationId = (row, request) =>
  NOTIFICATION_PREFIX + [row.workspace, row.session, request?.id || ""].map(encodeURIComponent).join(":");

async function panelOpen() {
  try {
    const contexts = await chrome.runtime.getContexts({ contextTypes: ["SIDE_PANEL"] });
    return contexts.length > 0;
  } catch {
    return false;
  }
}

/** A click on one of our notifications: open the side panel on that session, at its card. */
export async function onNotificationClicked(id) {
  if (!id.startsWith(NOTIFICATION_PREFIX)) return;
  const [workspace, session, request = ""] = id.slice(NOTIFICATION_PREFIX.length).split(":").map(decodeURIComponent);
  chrome.notifications.clear(id);
  await chrome.storage.session.set({ [FOCUS_KEY]: { workspace, session, request, at: Date.now() } });
  try {
    const win = await chrome.windows.getLastFocused();
    await chrome.sidePanel.open({ windowId: win.id });
  } catch (err) {
    console.warn("sidemirror: cannot open the side panel", err.message);
  }
}
