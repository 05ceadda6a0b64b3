// The Session tab's two pickers: their options, built from the server's workspace and session
// lists (names, branches, directories and titles are the server's text: shown through
// lib/page/dom.js, invisible characters made visible).

import { h } from "../lib/page/dom.js";
import { relativeTime } from "../lib/page/format.js";

/** The value of each picker's first option: follow along (see session-tab.js). */
export const AUTO = "";

/** Options for the workspace picker; `auto` is what "Auto" means now ({ws, why}) or null. */
export function workspaceOptions(workspaces, auto) {
  const autoText = !auto ? "Most recent" : auto.why === "browser" ? `In the browser — ${auto.ws.name}` : `Most recent — ${auto.ws.name}`;
  const autoTitle = auto?.why === "browser" ? "The workspace whose agent acted in the browser last" : "The most recently active workspace";
  const options = [h("option", { value: AUTO, text: autoText, title: autoTitle })];
  for (const w of workspaces) {
    const flags = [w.active ? "active" : null, w.branch ? `⎇ ${w.branch}` : null].filter(Boolean).join(" · ");
    options.push(h("option", { value: w.id, title: w.directory, text: flags ? `${w.name} (${flags})` : w.name }));
  }
  return options;
}

/** Options for the session picker, the latest session first. */
export function sessionOptions(sessions) {
  const latest = sessions[0];
  const options = [h("option", { value: AUTO, text: latest ? `Latest — ${sessionLabel(latest)}` : "Latest" })];
  for (const s of sessions) {
    options.push(h("option", { value: s.id, title: s.id, text: `${sessionLabel(s)} · ${relativeTime(s.last_activity)}` }));
  }
  return options;
}

/** Replace a picker's options, keeping `choice` selected if it is still there (else Auto). */
export function fillPicker(select, options, choice) {
  select.replaceChildren(...options);
  select.value = choice;
  if (select.value !== choice) select.value = AUTO;
}

function sessionLabel(s) {
  const title = (s.title || "").trim();
  return title ? (title.length > 60 ? `${title.slice(0, 59)}…` : title) : `Session ${String(s.id).slice(0, 8)}`;
}
