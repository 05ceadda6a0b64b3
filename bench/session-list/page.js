// The side panel's real session list (extension/sidepanel/session-list.js) over N sessions in
// W workspaces, shaped like `GET /api/sessions`, measured in the page (bench/session_list.py
// drives it): opening it, and each keystroke of a filter typed into it.

import { SessionList } from "/extension/sidepanel/session-list.js";

const STATES = ["idle", "idle", "idle", "running", "waiting", "ended"];
const WORDS = ["Fix", "the", "parser", "add", "tests", "for", "session", "list", "deploy", "API", "refactor", "review"];

/** The body of `GET /api/sessions` for `n` sessions over `w` workspaces, as a string. */
function listing(n, w) {
  const now = Date.parse("2026-12-05T12:00:00Z");
  const workspaces = [];
  for (let i = 0; i < w; i++) {
    const host = i % 10 === 9 ? { label: `host${i % 3}`, connected: i % 20 !== 19, since: null } : null;
    const name = host ? `${host.label}:project-${i}` : `project-${i}`;
    workspaces.push({
      id: `w${String(i).padStart(11, "0")}`,
      name,
      branch: i % 2 ? "main" : `feature/${i}`,
      directory: host ? `${host.label}:/home/dev/${name}` : `/home/dev/${name}`,
      pid: null,
      active: i < 3,
      agent: "claude",
      last_activity: new Date(now - i * 60_000).toISOString(),
      sessions: 0,
      host,
    });
  }
  const sessions = [];
  for (let k = 0; k < n; k++) {
    const ws = workspaces[k % w];
    ws.sessions += 1;
    const start = now - k * 3_600_000;
    const title = Array.from({ length: 6 }, (_, j) => WORDS[(k * 7 + j * 3) % WORDS.length]).join(" ");
    sessions.push({
      id: `${k.toString(16).padStart(8, "0")}-aaaa-4bbb-8ccc-${String(k).padStart(12, "0")}`,
      agent: k % 4 ? "claude" : "codex",
      title: `${title} #${k}`,
      started_at: new Date(start).toISOString(),
      last_activity: new Date(start + 1_800_000).toISOString(),
      active: false,
      state: STATES[k % STATES.length],
      reason: null,
      exact: k % 3 === 0,
      items: null,
      turns: k % 40,
      cost_usd: (k % 40) * 0.037,
      tokens: { input: 100 * k, output: 20 * k, cache_read: 3000 * k, cache_write: 90 * k },
      workspace: ws.id,
    });
  }
  return JSON.stringify({ workspaces, sessions });
}

const painted = () =>
  new Promise((resolve) =>
    requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => resolve(performance.now());
      ch.port2.postMessage(0);
    }),
  );

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x) => Math.round(x * 10) / 10;

let body = "";
const list = new SessionList({
  // As the panel's `listData`: the body parsed, the sessions grouped by workspace.
  load: async () => {
    const data = JSON.parse(body);
    const sessions = new Map();
    for (const s of data.sessions) {
      const of = sessions.get(s.workspace);
      if (of) of.push(s);
      else sessions.set(s.workspace, [s]);
    }
    return { workspaces: data.workspaces, sessions };
  },
  choose: () => {},
  current: () => ({ ws: null, session: null, auto: true, autoLabel: "project-0", inBrowser: null }),
});
document.getElementById("host").append(list.el);
window.__list = list;

/** Open the list `runs` times (closed between): from `open()` to the frame that paints the
 * rows, the listing's body parsed and grouped in that time. */
window.opening = async (n, w, runs) => {
  body = listing(n, w);
  const times = [];
  for (let r = 0; r < runs; r++) {
    list.close({ restoreFocus: false });
    await painted();
    const t0 = performance.now();
    await list.open();
    times.push((await painted()) - t0);
  }
  return {
    sessions: n,
    workspaces: w,
    body_mb: round(body.length / 1e6),
    open_ms: times.map(round),
    open_p50_ms: round(median(times)),
    open_max_ms: round(Math.max(...times)),
    rows_in_dom: list.list.childElementCount,
    status: list.status.textContent,
  };
};

/** Type `text` one character at a time, then delete it again: each keystroke from its input
 * event to the frame that paints the filtered rows. */
window.typing = async (text) => {
  const times = [];
  const counts = [];
  const key = async (value) => {
    await painted();
    const t0 = performance.now();
    list.filter.value = value;
    list.filter.dispatchEvent(new Event("input"));
    times.push((await painted()) - t0);
    counts.push(list.rows.length);
  };
  for (let i = 1; i <= text.length; i++) await key(text.slice(0, i));
  for (let i = text.length - 1; i >= 0; i--) await key(text.slice(0, i));
  return {
    keystrokes: times.length,
    key_ms: times.map(round),
    key_p50_ms: round(median(times)),
    key_max_ms: round(Math.max(...times)),
    rows_shown: counts,
  };
};

window.benchReady = true;
