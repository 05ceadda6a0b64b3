// The Session tab's two pickers: their options, built from the server's workspace and session
// lists (names, branches, directories and titles are the server's text: shown through
// lib/page/dom.js, invisible characters made visible), and the rule for what "Auto" shows.
//
// "Auto" follows the user's machine, not only the browser: it shows the workspace whose session
// changed last (the server lists workspaces most recent first), so a new session in any project
// is shown as soon as it writes. It stays on the workspace shown while that one is still changing
// (two agents at work would otherwise make the panel flip between them). An agent's last action
// in the browser is a hint next to its workspace, not a reason to move. The demo (a replay the
// server adds on a machine with no sessions) never competes: it changes every second, so by that
// rule it would keep "Auto" forever; "Auto" shows it only while no other workspace exists.

import { h } from "../lib/page/dom.js";
import { dayTime, relativeTime } from "../lib/page/format.js";

/** The value of each picker's first option: follow along. */
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

/** A workspace's name in the pickers; the demo is "Demo", whole, however narrow the panel. */
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
function hostGone(host, now) {
  if (!host || host.connected) return null;
  const since = relativeTime(host.since, now);
  return since ? `disconnected ${since}` : "disconnected";
}

/** Options for the workspace picker: Auto (what it shows now), then every workspace. */
export function workspaceOptions(workspaces, auto, inBrowser = null, now = Date.now()) {
  const options = [
    h("option", { value: AUTO, text: auto ? `Auto — ${workspaceLabel(auto)}` : "Auto", title: AUTO_RULE }),
  ];
  for (const w of workspaces) {
    const flags = [
      w.active ? "active" : null,
      w.branch ? `⎇ ${w.branch}` : null,
      w.id === inBrowser ? "in the browser" : null,
      hostGone(w.host, now),
    ];
    const flagText = flags.filter(Boolean).join(" · ");
    const label = workspaceLabel(w);
    options.push(h("option", { value: w.id, title: w.directory, text: flagText ? `${label} (${flagText})` : label }));
  }
  return options;
}

/** Options for the session picker, the latest session first; a sub-agent's thread
 * (`parent_id`) right under the session that spawned it. Sessions that would read the same
 * (the same first prompt, typed twice) also show when each started and its short id. */
export function sessionOptions(sessions) {
  const seen = new Map();
  for (const s of sessions) seen.set(sessionLabel(s), (seen.get(sessionLabel(s)) || 0) + 1);
  const label = (s) => {
    const base = sessionLabel(s);
    if (seen.get(base) < 2) return base;
    const started = s.started_at ? dayTime(s.started_at) : "";
    return [base, started && `started ${started}`, String(s.id).slice(0, 8)].filter(Boolean).join(" · ");
  };
  const latest = sessions.find((s) => !s.parent_id) || sessions[0];
  const options = [
    h("option", {
      value: AUTO,
      text: latest ? `Latest — ${label(latest)}` : "Latest",
      title: "The workspace's session that changed last",
    }),
  ];
  for (const s of nestedByParent(sessions)) {
    const mark = s.parent_id ? "↳ " : "";
    options.push(
      h("option", { value: s.id, title: s.id, text: `${mark}${label(s)} · ${relativeTime(s.last_activity)}` }),
    );
  }
  return options;
}

function nestedByParent(sessions) {
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

const signatures = new WeakMap(); // select → what its options say now

/**
 * Replace a picker's options, keeping `choice` selected if it is still there (else Auto). The
 * same options are not rebuilt (the lists are polled; an open dropdown must not flicker). The
 * picker's tooltip is its selected option's.
 */
export function fillPicker(select, options, choice) {
  const signature = options.map((o) => `${o.value}\u0000${o.textContent}\u0000${o.title}`).join("\u0001");
  if (signatures.get(select) !== signature) {
    select.replaceChildren(...options);
    signatures.set(select, signature);
  }
  if (select.value !== choice) select.value = choice;
  if (select.value !== choice) select.value = AUTO;
  select.title = select.selectedOptions[0]?.title || "";
}

/** A session's name in the picker: its title (cut to 60), else its short id. */
export function sessionLabel(s) {
  const title = (s.title || "").trim();
  return title ? (title.length > 60 ? `${title.slice(0, 59)}…` : title) : `Session ${String(s.id).slice(0, 8)}`;
}
