// Side panel shell: connection indicator and tabs. Each tab is a module exporting a factory
// `create(ctx) → { panel: HTMLElement, show(), hide() }`, created lazily on first show.
// To add a tab (Activity, Connect...), append an entry to TABS; nothing else changes.
//
// ctx: status() → last worker status | null; onStatus(fn) → unsubscribe; checkNow() → Promise.

import { checkNow, onStatus, readStatus } from "../lib/page/client.js";
import { h, setText } from "../lib/page/dom.js";
import { renderOffers } from "../lib/page/server-offer.js";
import { visible } from "../lib/page/visible-text.js";
import { createActivityTab } from "./activity-tab.js";
import { followFocusRequests } from "./attention-focus.js";
import { createConnectTab } from "./connect-tab.js";
import { createSessionTab } from "./session-tab.js";
import { createSessionsView } from "./sessions-view.js";

const TABS = [
  { id: "session", label: "Session", create: createSessionTab },
  { id: "sessions", label: "Sessions", create: createSessionsView },
  { id: "activity", label: "Activity", create: createActivityTab },
  { id: "connect", label: "Connect", create: createConnectTab },
];

const TAB_KEY = "sidepanel.tab";

let status = null;
const listeners = new Set();

const ctx = {
  status: () => status,
  onStatus(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
  checkNow: () => checkNow().catch((err) => console.warn("sidemirror: check failed", err)),
  // Show one session in the Session tab (the Sessions view, a notification click).
  openSession(workspace, session) {
    select("session", true);
    tabs.get("session").instance.focus(workspace, session);
  },
  // The list of every session (the Sessions view's "All sessions"), over the Session tab.
  openSessionList() {
    select("session");
    return tabs.get("session").instance.openList();
  },
  // An Activity row's back-link: the Session tab, on that tool call (browser-summary.js).
  openItem(target) {
    select("session", true);
    return tabs.get("session").instance.openItem(target);
  },
};

function setStatus(next) {
  status = next;
  renderConnection(next);
  for (const fn of listeners) fn(next);
}

function renderConnection(s) {
  const el = document.getElementById("connection");
  const text = el.querySelector(".connection-text");
  const state = s?.state || "connecting";
  el.dataset.state = state;
  let label;
  if (state === "connected") label = `Connected · v${s.version ?? "?"} · :${s.port}`;
  else if (state === "not_running") label = "Server not running";
  else if (state === "other_server") label = "Another server found";
  else if (state === "error") label = s.error?.code === "protocol_mismatch" ? "Protocol mismatch" : "Connection error";
  else label = "Connecting…";
  setText(text, label);
  el.title = visible(s?.error?.message || label);
  renderOffers(document.getElementById("server-offer"), s);
}

// --- tabs (WAI-ARIA tabs pattern, automatic activation) ---

const tabs = new Map(); // id → { button, panelEl, instance }

function buildTabs() {
  const nav = document.getElementById("tabs");
  const panels = document.getElementById("panels");
  for (const def of TABS) {
    const button = h("button", {
      type: "button",
      id: `tab-${def.id}`,
      class: "tab",
      text: def.label,
      attrs: { role: "tab", "aria-selected": "false", "aria-controls": `panel-${def.id}` },
      tabIndex: -1,
      on: { click: () => select(def.id, true) },
    });
    const panelEl = h("section", {
      id: `panel-${def.id}`,
      class: "tab-panel",
      hidden: true,
      attrs: { role: "tabpanel", "aria-labelledby": `tab-${def.id}` },
    });
    nav.append(button);
    panels.append(panelEl);
    tabs.set(def.id, { def, button, panelEl, instance: null });
  }
  nav.addEventListener("keydown", (ev) => {
    const ids = TABS.map((t) => t.id);
    const i = ids.indexOf(/** @type {HTMLElement} */ (ev.target).id.replace(/^tab-/, ""));
    if (i < 0) return;
    let j = null;
    if (ev.key === "ArrowRight") j = (i + 1) % ids.length;
    else if (ev.key === "ArrowLeft") j = (i - 1 + ids.length) % ids.length;
    else if (ev.key === "Home") j = 0;
    else if (ev.key === "End") j = ids.length - 1;
    if (j === null) return;
    ev.preventDefault();
    select(ids[j], true);
  });
}

function select(id, focus = false) {
  for (const [tid, tab] of tabs) {
    const on = tid === id;
    tab.button.setAttribute("aria-selected", String(on));
    tab.button.tabIndex = on ? 0 : -1;
    tab.panelEl.hidden = !on;
    if (on) {
      if (!tab.instance) {
        tab.instance = tab.def.create(ctx);
        tab.panelEl.append(tab.instance.panel);
      }
      tab.instance.show();
      if (focus) tab.button.focus();
    } else if (tab.instance) {
      tab.instance.hide();
    }
  }
  sessionStorage.setItem(TAB_KEY, id);
}

async function main() {
  buildTabs();
  onStatus(setStatus);
  // Always ask for a fresh check on open: wakes the worker, re-pairs if the server restarted,
  // and holds this page's requests until the worker has checked who answers (lib/page/client.js).
  const first = checkNow();
  status = await readStatus();
  renderConnection(status);
  const saved = sessionStorage.getItem(TAB_KEY);
  select(tabs.has(saved) ? saved : TABS[0].id);
  followFocusRequests(ctx); // a notification clicked: open its session
  try {
    setStatus(await first);
  } catch (err) {
    console.warn("sidemirror: worker unavailable", err);
  }
}

main();
