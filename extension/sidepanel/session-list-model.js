// What the session list (session-list.js) shows, without the DOM: its rows, grouped by workspace
// and newest first, and the filter typed over them. Ten thousand sessions are filtered at each
// keystroke, so each row's searchable text is lower-cased once, when the rows are made.

import { duration } from "../lib/page/format.js";
import { isDemo, nestedByParent, sessionLabel, workspaceLabel } from "./session-pickers.js";

/** The row of the choice that follows the session that changed last (session-pickers.js's
 * AUTO): a new object each time, as the virtual list keeps its height and element on a row. */
export function autoRow() {
  return { kind: "auto", key: "auto", text: "" };
}

/** What a filter looks for in a workspace: its name (a forwarded host's is `LABEL:/dir`), its
 * branch and its directory. */
export function workspaceText(ws) {
  return [workspaceLabel(ws), ws.branch ? `⎇ ${ws.branch}` : "", ws.directory || ""].join(" ");
}

const time = (iso) => {
  const t = Date.parse(iso || "");
  return Number.isNaN(t) ? 0 : t;
};

/**
 * Every row, before any filter: for each workspace (newest activity first; the demo last), a
 * group row, then its sessions (newest activity first, a sub-agent's thread right under the
 * session that spawned it). `sessionsByWs`: workspace id → the
 * sessions its listing gave (GET /workspace/{ws}/sessions); a workspace not listed yet shows
 * its group row alone.
 */
export function buildRows(workspaces, sessionsByWs) {
  const ordered = [...workspaces].sort(
    (a, b) => Number(isDemo(a)) - Number(isDemo(b)) || time(b.last_activity) - time(a.last_activity),
  );
  const rows = [];
  for (const ws of ordered) {
    const wsText = workspaceText(ws).toLowerCase();
    rows.push({ kind: "group", key: `w:${ws.id}`, ws, text: wsText, wsText });
    const sessions = nestedByParent(
      [...(sessionsByWs.get(ws.id) || [])].sort((a, b) => time(b.last_activity) - time(a.last_activity)),
    );
    for (const s of sessions) {
      rows.push({
        kind: "session",
        key: `s:${ws.id}:${s.id}`,
        ws,
        s,
        text: `${sessionLabel(s)} ${s.id}`.toLowerCase(),
        wsText,
      });
    }
  }
  return rows;
}

/** The words of a filter, lower-cased: every one must be found (in the title or id, or in the
 * workspace's name, branch or directory). */
export function filterWords(query) {
  return String(query || "")
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * The rows a filter keeps: sessions whose title, id or workspace has every word, under their
 * workspace's group row (shown once it keeps a session, or when the workspace itself matches).
 * No filter: every row, after the Auto row.
 */
export function filterRows(rows, query) {
  const words = filterWords(query);
  if (!words.length) return [autoRow(), ...rows];
  const out = [];
  let group = null;
  let groupShown = false;
  for (const row of rows) {
    if (row.kind === "group") {
      group = row;
      groupShown = false;
      if (words.every((w) => row.wsText.includes(w))) {
        out.push(row);
        groupShown = true;
      }
      continue;
    }
    if (!words.every((w) => row.text.includes(w) || row.wsText.includes(w))) continue;
    if (!groupShown && group) {
      out.push(group);
      groupShown = true;
    }
    out.push(row);
  }
  return out;
}

/** The row after `index` that can be chosen, moving by `step` (±1), clamped to the list. */
export function nextIndex(rows, index, step) {
  if (!rows.length) return -1;
  const i = index < 0 ? (step > 0 ? 0 : rows.length - 1) : index + step;
  return Math.min(rows.length - 1, Math.max(0, i));
}

/** How long a session ran: from its start to its last activity ("" when either is unknown). */
export function sessionSpan(s) {
  const start = time(s.started_at);
  const end = time(s.last_activity);
  return start && end >= start ? end - start : null;
}

const DAY_MS = 24 * 3600 * 1000;

/** A span as the list shows it: "12 m", "3 h 5 m", and in days from two days on ("9 d"). */
export function spanText(ms) {
  return ms >= 2 * DAY_MS ? `${Math.round(ms / DAY_MS)} d` : duration(ms);
}

/** The first 8 characters of an id (the list shows it; the header's tooltip has it whole). */
export function shortId(id) {
  return String(id).slice(0, 8);
}

/** Counts of what a list holds, for its status line: sessions and workspaces shown. */
export function countRows(rows) {
  let sessions = 0;
  let groups = 0;
  for (const row of rows) {
    if (row.kind === "session") sessions += 1;
    else if (row.kind === "group") groups += 1;
  }
  return { sessions, groups };
}
