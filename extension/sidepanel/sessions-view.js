// The Sessions view: every live session on the machine and on forwarded hosts (any workspace,
// any agent) with its state, workspace, agent, title and how long it has been in that state;
// waiting ones first. A click
// opens the session in the Session tab. Pending permission requests show as decision cards.
// Alerts (toolbar badge, notifications) are the worker's (lib/worker/attention-alerts.js);
// this view holds the user's opt-in for notifications.

import { h } from "../lib/page/dom.js";
import { attentionFeed } from "../lib/page/attention-feed.js";
import { duration } from "../lib/page/format.js";
import { KEYS } from "../lib/shared/config.js";
import { DecisionList } from "./decision-card.js";

const ALERTS_KEY = KEYS.alerts; // chrome.storage.local: notifications on (true) or off
const TICK_MS = 1000;

const AGENTS = { claude: "Claude", codex: "Codex", acp: "ACP agent" };

/** "Codex · for 2m 10s": whose session it is, and how long it has been in its state. */
export function sinceText(s, now = Date.now()) {
  const agent = AGENTS[s.agent] || s.agent || "";
  const waited = s.since ? `for ${duration(now - Date.parse(s.since))}` : "";
  return [agent, waited].filter(Boolean).join(" · ");
}

export function stateLabel(s) {
  if (s.state === "waiting") return s.reason === "input" ? "waiting for your answer" : "waiting for permission";
  return s.state;
}

/** Where a state came from (the server's `exact`), as the chip's tooltip says it. */
export function stateSource(s) {
  return s.exact
    ? "Reported by the agent (its hooks or protocol)"
    : "Inferred from the session's file, its agent process and the time since it last wrote";
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

  const render = () => {
    empty.hidden = rows.length > 0;
    list.replaceChildren(
      ...rows.map((s) => {
        return h(
          "li",
          {
            class: "session-row",
            dataset: { state: s.state, reason: s.reason || "", workspace: s.workspace, session: s.session },
          },
          h(
            "button",
            {
              type: "button",
              class: "session-open",
              title: s.directory || s.workspace,
              on: { click: () => ctx.openSession?.(s.workspace, s.session) },
            },
            // An inferred state is drawn with a dashed outline: the same words, less certain.
            h("span", {
              class: `chip st-${s.state}${s.exact ? "" : " inferred"}`,
              text: stateLabel(s),
              title: stateSource(s),
              dataset: { exact: String(Boolean(s.exact)) },
            }),
            h("span", { class: "session-ws", text: s.workspace_name || s.workspace }),
            h("span", { class: "session-title", text: s.title || `Session ${String(s.session).slice(0, 8)}` }),
            h("span", { class: "session-since", text: sinceText(s) }),
          ),
        );
      }),
    );
  };
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
