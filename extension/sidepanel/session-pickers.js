// How the Session tab names workspaces and sessions (in its header and its session list,
// session-list.js), and the rule for what "Auto" shows.
//
// "Auto" follows the user's machine, not only the browser: it shows the workspace whose session
// changed last (the server lists workspaces most recent first), so a new session in any project
// is shown as soon as it writes. It stays on the workspace shown while that one is still changing
// (two agents at work would otherwise make the panel flip between them). An agent's last action
// in the browser is a hint next to its workspace, not a reason to move. The demo (a replay the
// server adds on a machine with no sessions) never competes: it changes every second, so by that
// rule it would keep "Auto" forever; "Auto" shows it only while no other workspace exists.

import { relativeTime } from "../lib/page/format.js";

/** The choice that follows along (of a workspace, of a session). */
export const AUTO = "";

/** What "Auto" means, as its tooltip says it. */
export const AUTO_RULE =
  "Auto shows the session that changed last on this machine, in any project. " +
  "It stays on the session shown while that one is still changing. " +
  "The demo is shown only until a real session exists. " +
  "Pick a workspace or a session to stay on it.";

/** A workspace shown that changed this recently keeps "Auto" on it. */
export const SETTLE_MS = 5000;
/** An agent's browser action this recent marks its workspace. */
export const BROWSER_HINT_MS = 2 * 60 * 1000;

/** The demo the server adds on a machine with no sessions (server: sources/claude/demo.py). */
const DEMO_DIRECTORY = "/demo/sidemirror-demo";

export function isDemo(ws) {
  return ws?.directory === DEMO_DIRECTORY;
}

/** A workspace's name in the header and the list; the demo is "Demo", whole, however narrow the panel. */
export function workspaceLabel(ws) {
  return isDemo(ws) ? "Demo" : ws.name;
}

/**
 * The workspace "Auto" shows: the one that changed last (`workspaces` come most recent first),
 * unless the one shown (`shownId`) changed within SETTLE_MS; the demo only when it is alone.
 */
export function autoWorkspace(workspaces, shownId, now = Date.now()) {
  const real = workspaces.filter((w) => !isDemo(w));
  const candidates = real.length ? real : workspaces;
  const latest = candidates[0] ?? null;
  const shown = shownId ? candidates.find((w) => w.id === shownId) : null;
  if (latest && shown && shown !== latest && now - Date.parse(shown.last_activity) < SETTLE_MS) return shown;
  return latest;
}

/** The id of the workspace whose agent acted in the browser lately (GET
 * /api/activity/latest-workspace), or null. */
export function browserWorkspace(latest, now = Date.now()) {
  if (!latest?.workspace || !latest.ts) return null;
  return now - Date.parse(latest.ts) < BROWSER_HINT_MS ? latest.workspace : null;
}

/**
 * A forwarded host whose `sidemirror forward` is gone: its sessions only look idle, so say so,
 * and since when (null for this machine's workspaces and a connected host).
 */
export function hostGone(host, now = Date.now()) {
  if (!host || host.connected) return null;
  const since = relativeTime(host.since, now);
  return since ? `disconnected ${since}` : "disconnected";
}

/** Sessions in their order, each sub-agent's thread (`parent_id`) right under the session that
 * spawned it. */
export function nestedByParent(sessions) {
  const ids = new Set(sessions.map((s) => s.id));
  const children = new Map();
  for (const s of sessions) {
    if (s.parent_id && ids.has(s.parent_id)) children.set(s.parent_id, [...(children.get(s.parent_id) || []), s]);
  }
  const out = [];
  const add = (s, depth) => {
    out.push(s);
    if (depth < 8) for (const c of children.get(s.id) || []) add(c, depth + 1);
  };
  for (const s of sessions) if (!(s.parent_id && ids.has(s.parent_id))) add(s, 0);
  return out;
}

/** A session's name: its title (cut to 60), else its short id. */
export function sessionLabel(s) {
  const title = (s.title || "").trim();
  return title ? (title.length > 60 ? `${title.slice(0, 59)}…` : title) : `Session ${String(s.id).slice(0, 8)}`;
}
