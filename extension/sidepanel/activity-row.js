// One row of the Activity tab: a command's summary line (time, command, arguments, ✓/✗ and
// duration), its error, and its details when opened. Built from nodes; every string from the
// server goes through lib/page/dom.js (as text, invisible characters shown).

import { h } from "../lib/page/dom.js";
import { clockTimeSeconds, duration, fullTime } from "../lib/page/format.js";
import { CATEGORY_LABELS, categoryOf, errorMessage, searchText } from "./activity-model.js";
import { backLink } from "./browser-summary.js";

let uid = 0;

/**
 * (Re)build the row `rec.li` from its start (or lone entry) and its end: the summary button
 * (`onToggle` opens the details), the error line, and the details when open.
 */
export function fillRow(rec, { onToggle, names, openLink = null }) {
  const { entry, end } = rec;
  const last = end || entry;
  const cat = categoryOf(entry, end);
  rec.cat = cat;
  rec.search = searchText(entry, end);
  const li = rec.li;
  li.className = `act-row cat-${cat}`;
  li.dataset.id = entry.id;
  if (end) li.dataset.endId = end.id;
  li.dataset.category = cat;

  const detailsId = rec.detailsId || (rec.detailsId = `act-d-${++uid}`);
  const args = (entry.args || []).join(" ");
  const target = args || (entry.type === "navigation" || cat === "navigation" ? entry.url || "" : "");
  const summary = h(
    "button",
    {
      type: "button",
      class: "act-summary",
      attrs: { "aria-expanded": String(rec.open), "aria-controls": detailsId },
      on: { click: onToggle },
    },
    h("span", { class: "act-cat", title: CATEGORY_LABELS[cat], attrs: { "aria-hidden": "true" } }),
    h("time", {
      class: "act-time",
      dateTime: entry.ts || null,
      title: fullTime(entry.ts),
      text: clockTimeSeconds(entry.ts),
    }),
    h("span", { class: "act-cmd", text: entry.command || entry.type }),
    target ? h("span", { class: "act-args", text: target }) : h("span", { class: "act-args" }),
    statusMark(entry, end, cat),
  );
  const err = errorMessage(entry, end);
  const details = h("div", { class: "act-details", id: detailsId, hidden: !rec.open });
  if (rec.open) fillDetails(rec, details, names);
  const linked = [end, entry].find((e) => e?.link);
  const from = linked && openLink ? backLink(linked, openLink) : null; // browser-summary.js
  li.replaceChildren(
    ...[summary, from, err ? h("p", { class: "act-error", text: err }) : null, details].filter(Boolean),
  );
  rec.detailsEl = details;
  rec.summary = summary;
  rec.ts = last.ts;
}

function statusMark(entry, end, cat) {
  if (cat === "pending") {
    return h(
      "span",
      { class: "act-status pending" },
      h("span", { class: "spinner", attrs: { "aria-hidden": "true" } }),
      h("span", { class: "visually-hidden", text: "running" }),
    );
  }
  const e = end || entry;
  if (e.type !== "command_end" && e.type !== "command_start" && !e.status) {
    return h("span", { class: "act-status obs" }, h("span", { class: "act-kind", text: e.type }));
  }
  const failed = e.status === "error" || Boolean(e.error);
  const dur = duration(e.duration_ms);
  return h(
    "span",
    { class: `act-status ${failed ? "error" : "ok"}` },
    h("span", { class: "mark", attrs: { "aria-hidden": "true" }, text: failed ? "✗" : "✓" }),
    h("span", { class: "visually-hidden", text: failed ? "failed" : "succeeded" }),
    dur ? h("span", { class: "dur", text: dur }) : null,
  );
}

/** The details of an open row: every field of the entry, and its refs. */
export function fillDetails(rec, box, names) {
  const { entry, end } = rec;
  const last = end || entry;
  const rows = [];
  const add = (label, value, mono = false) => {
    if (value === null || value === undefined || value === "") return;
    rows.push(h("dt", { text: label }), h("dd", { class: mono ? "mono" : null, text: String(value) }));
  };
  add("Category", CATEGORY_LABELS[rec.cat]);
  add("URL", last.url || entry.url, true);
  if ((entry.args || []).length) add("Arguments", entry.args.map((a, i) => `${i + 1}. ${a}`).join("\n"), true);
  add("Result", last.result != null ? last.result + (last.truncated ? " …(truncated)" : "") : null, true);
  add("Error", last.error);
  add("Started", entry.type === "command_start" ? fullTime(entry.ts) : null);
  add(end ? "Finished" : "Time", fullTime(last.ts));
  add("Duration", last.duration_ms != null ? duration(last.duration_ms) : null);
  const ws = last.workspace || entry.workspace;
  add("Workspace", ws ? `${names.get(ws) || "workspace"} (${ws})` : null);
  add("Source", last.source || entry.source);
  add("Tab", last.tab_id ?? entry.tab_id);
  add("Request", entry.request_id, true);
  add("Entry ids", [entry.id, end?.id].filter(Boolean).join(" → "), true);
  const refs = last.refs?.length ? last.refs : entry.refs || [];
  if (refs.length) {
    add("Refs", `${refs.length} element${refs.length === 1 ? "" : "s"}`);
    const list = h(
      "ul",
      { class: "act-refs" },
      refs
        .slice(0, 50)
        .map((r) =>
          h("li", {}, h("code", { text: r.ref || "?" }), ` ${r.role || ""} ${r.name ? `“${r.name}”` : ""}`.trimEnd()),
        ),
    );
    box.replaceChildren(h("dl", { class: "act-dl" }, rows), list);
  } else {
    box.replaceChildren(h("dl", { class: "act-dl" }, rows));
  }
}
