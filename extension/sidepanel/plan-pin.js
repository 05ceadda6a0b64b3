// The current plan (the latest `plan` item: TodoWrite, Task* tools, ACP plan, Codex plan
// updates), pinned above the timeline as a collapsible checklist with its progress ("3/7"),
// replaced live as the agent updates it.

import { h } from "../lib/page/dom.js";

const MARKS = { completed: "☑", in_progress: "◐" };

export class PlanPin {
  constructor() {
    this.seq = -1;
    this.onChange = null; // the plan shown changed (or went)
    this.progress = h("span", { class: "plan-progress" });
    this.list = h("ul", { class: "plan-list" });
    this.details = h(
      "details",
      { class: "plan-pin-details", open: true },
      h("summary", {}, h("span", { class: "who", text: "Plan" }), " ", this.progress),
      this.list,
    );
    this.el = h("section", { class: "plan-pin", hidden: true, attrs: { "aria-label": "Current plan" } }, this.details);
  }

  reset() {
    this.seq = -1;
    this.el.hidden = true;
    this.onChange?.();
  }

  /** Consider items (snapshot, history page or one live item): the latest plan wins. */
  offer(items) {
    for (const item of items) {
      if (item?.type !== "plan" || item.parent_tool_use_id) continue;
      const seq = typeof item.seq === "number" ? item.seq : 0;
      if (seq > this.seq) {
        this.seq = seq;
        this._show(Array.isArray(item.entries) ? item.entries : []);
      }
    }
  }

  _show(entries) {
    const done = entries.filter((e) => e.status === "completed").length;
    this.progress.textContent = `${done}/${entries.length}`;
    this.progress.setAttribute("aria-label", `${done} of ${entries.length} done`);
    this.list.replaceChildren(
      ...entries.map((e) =>
        h(
          "li",
          { class: ["plan-entry", `st-${String(e.status || "pending").replace(/[^a-z_]/g, "")}`] },
          h("span", { class: "plan-mark", attrs: { "aria-hidden": "true" }, text: MARKS[e.status] || "☐" }),
          h("span", { class: "visually-hidden", text: `${e.status || "pending"}: ` }),
          h("span", { class: "plan-text", text: e.content || "" }),
        ),
      ),
    );
    this.el.hidden = entries.length === 0;
    this.onChange?.();
  }
}
