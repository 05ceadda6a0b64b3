// "Allow all N waiting in this session": one batch card per session with two or more pending
// requests, listing each request (its tool and command, or its file) before anything is allowed.
// The card sends exactly the ids it lists (`POST /api/decisions/batch`, docs/api.md): a request
// that arrives later gets a new list, not a silent Allow. Its button waits until every listed
// request's own card shows its whole input, as each card's Allow does; a request whose input
// cannot be shown whole is left out (only its own Deny answers it). What the server says of each
// id is shown: allowed, or how it had already closed (it is never answered twice).

import { api, path } from "../lib/page/client.js";
import { h, setText } from "../lib/page/dom.js";

const SUMMARY_KEYS = ["command", "file_path", "notebook_path", "url", "path", "pattern", "query"];
const CLOSED = {
  allow: "already allowed",
  deny: "already denied",
  timeout: "timed out: asked in the terminal",
  terminal: "answered in the terminal",
  gone: "the agent stopped waiting",
};

/** One line for a request: "Bash: npm test" (the server's input, already redacted). */
export function requestSummary(request) {
  const input = request.tool_input;
  if (input && typeof input === "object") {
    for (const key of SUMMARY_KEYS) {
      if (typeof input[key] === "string" && input[key]) return `${request.tool_name}: ${input[key]}`;
    }
  }
  return `${request.tool_name}: ${JSON.stringify(input)}`;
}

/** What a batch result says, for the request it names. */
export function resultText(result, summary) {
  if (result.result === "allowed") return `${summary}: allowed`;
  if (result.result === "already_answered")
    return `${summary}: not answered again, ${CLOSED[result.outcome] || result.outcome}`;
  return `${summary}: not allowed (${result.result})`;
}

export class BatchCards {
  constructor() {
    this.el = h("div", { class: "decision-batches" });
    this.shown = new Map(); // "ws\0session" → {key, card, watch}
  }

  /** Draw a batch card for each session with two or more whole requests in `pending`. */
  show(pending, cards, whereText) {
    const groups = new Map();
    for (const r of pending) {
      if (!r.card?.whole) continue;
      const k = `${r.workspace}\u0000${r.session}`;
      groups.set(k, [...(groups.get(k) || []), r]);
    }
    for (const [k, entry] of this.shown) {
      const group = groups.get(k);
      const key = group?.map((r) => r.id).join(" ");
      // Unchanged; or sent, its answers shown until the session has a new batch to offer.
      if (key === entry.key || (entry.card.dataset.sent && !(group && group.length > 1))) continue;
      clearInterval(entry.watch);
      entry.card.remove();
      this.shown.delete(k);
    }
    for (const [k, group] of groups) {
      if (group.length < 2 || this.shown.has(k)) continue;
      this.shown.set(k, this.batchCard(k, group, cards, whereText(group[0])));
    }
  }

  batchCard(k, group, cards, where) {
    const n = group.length;
    const items = group.map((r) =>
      h("li", { class: "decision-batch-item", dataset: { id: r.id }, text: requestSummary(r) }),
    );
    const allow = h("button", { type: "button", class: "decision-allow", text: `Allow all ${n}`, disabled: true });
    const status = h("p", { class: "decision-status", attrs: { role: "status", "aria-live": "polite" } });
    const card = h(
      "article",
      { class: "decision-card decision-batch", attrs: { "aria-label": `Allow all ${n} waiting in this session` } },
      h("header", { class: "decision-head", text: `Allow all ${n} waiting in this session` }),
      h("p", { class: "decision-where", text: where }),
      h("ol", { class: "decision-batch-list" }, ...items),
      h("div", { class: "decision-actions" }, allow),
      status,
    );
    // Enabled once every listed request's own card has shown its whole input.
    const ready = () => group.every((r) => cards.get(r.id)?.dataset.rendered === "1");
    const watch = setInterval(() => {
      if (card.dataset.sent) return clearInterval(watch);
      allow.disabled = !ready();
    }, 200);
    allow.addEventListener("click", async () => {
      allow.disabled = true;
      card.dataset.sent = "1";
      clearInterval(watch);
      const [workspace, session] = k.split("\u0000");
      try {
        const { results } = await api(path.decisionBatch(), {
          method: "POST",
          body: { workspace, session, ids: group.map((r) => r.id), behavior: "allow" },
        });
        const byId = new Map(group.map((r) => [r.id, requestSummary(r)]));
        for (const result of results) {
          const item = items.find((li) => li.dataset.id === result.id);
          if (item) {
            item.dataset.result = result.result;
            setText(item, resultText(result, byId.get(result.id) || result.id));
          }
        }
        const allowed = results.filter((r) => r.result === "allowed").length;
        setText(status, allowed === n ? `Allowed all ${n}` : `Allowed ${allowed} of ${n}`);
      } catch (err) {
        delete card.dataset.sent;
        allow.disabled = !ready();
        setText(status, `Could not send: ${err.message}`);
      }
    });
    this.el.append(card);
    return { key: group.map((r) => r.id).join(" "), card, watch };
  }
}
