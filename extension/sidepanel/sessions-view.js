// The Sessions view: every live session on the machine and on forwarded hosts (any workspace,
// any agent) with its state, workspace, agent, title and how long it has been in that state;
// waiting ones first. A click
// opens the session in the Session tab. A waiting session's permission request shows as its
// decision card inside its row; a request whose session is not listed (yet), above the list.
// Rows are kept and updated in place (the counters tick every second): a card being filled in
// keeps its focus and what was typed.
// Alerts (toolbar badge, notifications) are the worker's (lib/worker/attention-alerts.js);
// this view holds the user's opt-in for notifications.

import { h, setText } from "../lib/page/dom.js";
import { attentionFeed } from "../lib/page/attention-feed.js";
import { duration } from "../lib/page/format.js";
import { KEYS } from "../lib/shared/config.js";
import { DecisionList } from "./decision-card.js";
import { paintStateChip, stateLabel } from "./state-chip.js";

const ALERTS_KEY = KEYS.alerts; // chrome.storage.local: notifications on (true) or off
const TICK_MS = 1000;

const AGENTS = { claude: "Claude", codex: "Codex", acp: "ACP agent" };

/** "Codex · for 2 m 10 s": whose session it is, and how long it has been in its state. */
export function sinceText(s, now = Date.now()) {
  const agent = AGENTS[s.agent] || s.agent || "";
  return [agent, s.since ? stateAge(now - Date.parse(s.since)) : ""].filter(Boolean).join(" · ");
}

/** How long a state has lasted, as a counter ticking once a second reads it: whole seconds
 * ("for 983 ms", then "for 1.9 s", read as a stopwatch, not a state's age), and "just now" for
 * the first one (a clock a little ahead of the server's gives a negative age). */
function stateAge(ms) {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return "just now";
  return `for ${seconds < 60 ? `${seconds} s` : duration(seconds * 1000)}`;
}

/** A row's elements: the button that opens the session, and where its decision cards go. */
function sessionRow(s, ctx) {
  const chip = h("span");
  const ws = h("span", { class: "session-ws" });
  const title = h("span", { class: "session-title" });
  const since = h("span", { class: "session-since" });
  const open = h(
    "button",
    { type: "button", class: "session-open", on: { click: () => ctx.openSession?.(s.workspace, s.session) } },
    chip,
    ws,
    title,
    since,
  );
  const cards = h("div", { class: "session-cards" });
  const li = h("li", { class: "session-row", dataset: { workspace: s.workspace, session: s.session } }, open, cards);
  return { li, open, chip, ws, title, since, cards };
}

function updateRow(row, s) {
  Object.assign(row.li.dataset, { state: s.state, reason: s.reason || "" });
  row.open.title = s.directory || s.workspace;
  // An inferred state is drawn with a dashed outline: the same words, less certain.
  paintStateChip(row.chip, s, stateLabel(s));
  setText(row.ws, s.workspace_name || s.workspace);
  setText(row.title, s.title || `Session ${String(s.session).slice(0, 8)}`);
  setText(row.since, sinceText(s));
}

export function createSessionsView(ctx) {
  const list = h("ul", { class: "sessions-list", attrs: { "aria-label": "Live sessions" } });
  const empty = h("p", { class: "sessions-empty", text: "No live session right now." });
  const alerts = h("input", { type: "checkbox", id: "alerts-toggle" });
  const toggle = h(
    "label",
    { class: "alerts-toggle", htmlFor: "alerts-toggle" },
    alerts,
    " Notify me when a session waits or finishes",
  );
  const decisions = new DecisionList();
  const allSessions = h("button", {
    type: "button",
    class: "link-button all-sessions",
    text: "All sessions…",
    title: "Every session of every workspace, with a filter",
    on: { click: () => ctx.openSessionList?.() },
  });
  const head = h("div", { class: "sessions-head" }, toggle, allSessions);
  const panel = h("div", { class: "sessions-view" }, head, decisions.el, list, empty);
  let rows = [];
  let timer = null;

  chrome.storage.local.get(ALERTS_KEY).then((got) => {
    alerts.checked = got[ALERTS_KEY] === true;
  });
  alerts.addEventListener("change", () => chrome.storage.local.set({ [ALERTS_KEY]: alerts.checked }));

  const shown = new Map(); // workspace + session → its row's elements
  const keyOf = (s) => `${s.workspace}\u0000${s.session}`;
  const render = () => {
    empty.hidden = rows.length > 0;
    const listed = new Set();
    rows.forEach((s, i) => {
      const key = keyOf(s);
      listed.add(key);
      let row = shown.get(key);
      if (!row) shown.set(key, (row = sessionRow(s, ctx)));
      updateRow(row, s);
      // Moved only when the order changed: moving a node takes the focus out of it.
      if (list.children[i] !== row.li) list.insertBefore(row.li, list.children[i] || null);
      for (const card of decisions.cardsOf(s.workspace, s.session))
        if (card.parentElement !== row.cards) row.cards.append(card);
    });
    for (const [key, row] of shown) {
      if (listed.has(key)) continue;
      decisions.el.append(...row.cards.children); // a card outlives its row: back above the list
      row.li.remove();
      shown.delete(key);
    }
  };
  decisions.onChange = render;
  const order = (all) =>
    [...all].sort(
      (a, b) =>
        Number(a.state !== "waiting") - Number(b.state !== "waiting") ||
        Date.parse(b.since || "0") - Date.parse(a.since || "0"),
    );

  attentionFeed().subscribe((all) => {
    rows = order(all);
    render();
  });
  return {
    panel,
    show() {
      clearInterval(timer);
      timer = setInterval(render, TICK_MS); // the "for 2m 10s" counters
      render();
    },
    hide() {
      clearInterval(timer);
    },
  };
}
