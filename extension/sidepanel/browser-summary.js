// Browser ↔ session in the side panel (browser-link).
//
// - A browser tool card (Playwright MCP, Chrome DevTools MCP, Claude in Chrome...) gets, once its
//   result is in, a one-line summary of what the browser showed during the call
//   ("→ /dashboard · 2 console errors · 1 failed request") that opens into the linked entries,
//   and a mark when the browser saw errors. Fetched from GET …/items/{id}/activity when the card
//   scrolls into view, a few at a time, so a long session does not fire hundreds of requests.
// - An Activity row linked to a tool call shows where it came from ("from Claude: click e5 ·
//   turn 4"); clicking it opens the Session tab on that call (`revealItem`).
// Every string from the server is set as text (lib/page/dom.js).

import { h } from "../lib/page/dom.js";
import { clockTimeSeconds } from "../lib/page/format.js";

// Same families of names the server links by (server/sidemirror/activity/calls.py).
const BROWSER_TOOL =
  /(?:^|_|[./:])(?:playwright|chrome[-_]?devtools|claude[-_]in[-_]chrome|puppeteer|browser[-_]?mcp|browserbase|stagehand)(?:__|[./:_-])|(?:^|_)browser_[a-z]/i;
const MAX_CONCURRENT = 3;
const LIVE_REFETCH_MS = 2500; // entries posted just after a live call's result still count
const AGENTS = { claude: "Claude", codex: "Codex", acp: "the agent" };

export function isBrowserTool(name) {
  return typeof name === "string" && BROWSER_TOOL.test(name);
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** "→ /dashboard · 2 console errors · 1 failed request" from the server's summary. */
export function summaryText(s) {
  const parts = [];
  if (s.where) parts.push(`→ ${s.where}`);
  if (s.console_errors) parts.push(plural(s.console_errors, "console error"));
  if (s.page_errors) parts.push(plural(s.page_errors, "page error"));
  if (s.failed_requests) parts.push(plural(s.failed_requests, "failed request"));
  if (s.dialogs) parts.push(plural(s.dialogs, "dialog"));
  if (!parts.length) {
    const n = (s.navigations || 0) + (s.commands || 0);
    parts.push(n ? plural(n, "browser event") : "No browser events");
  }
  return parts.join(" · ");
}

function entryText(e) {
  if (e.error) return e.error;
  if (e.type === "navigation") return e.url || e.command;
  return [e.command, ...(e.args || [])].join(" ");
}

function entryLine(e) {
  const failed = e.status === "error" || Boolean(e.error);
  return h(
    "li",
    { class: ["browser-entry", failed && "error"], dataset: { entryId: e.id } },
    h("time", { class: "ts", dateTime: e.ts || null, text: clockTimeSeconds(e.ts) }),
    h("span", { class: "browser-entry-cmd", text: e.command || e.type }),
    h("span", { class: "browser-entry-text", text: entryText(e) }),
    e.command === "request.failed" && e.args?.length
      ? h("span", { class: "browser-entry-where", text: e.args.slice(0, 2).join(" ") })
      : null,
  );
}

/** Fetches and draws the summaries of one timeline's browser tool cards. */
export class BrowserSummaries {
  /** @param {{fetchActivity: (workspace: string, itemId: string) => Promise<object>, root: Element}} opts */
  constructor({ fetchActivity, root }) {
    this.fetchActivity = fetchActivity;
    this.queue = [];
    this.running = 0;
    // Rooted at the timeline's scroller: a margin on the page viewport does not reach past the
    // scroller's clipping, so cards just above or below the visible timeline would never load.
    this.observer = new IntersectionObserver((seen) => this._seen(seen), { root, rootMargin: "300px" });
    this.pending = new WeakMap(); // card element → the load to run when it comes into view
  }

  /** A tool card of workspace `ws` got its result (timeline hook): summarise it if a browser
   * drove it. */
  onResult(card, result, ws) {
    if (!isBrowserTool(result.name || card.el.querySelector(".tool-name")?.textContent)) return;
    const load = () => this._enqueue(card, ws, result.id);
    this.pending.set(card.el, load);
    // Observed once in the document (a snapshot builds its cards in a fragment first).
    requestAnimationFrame(() => this.observer.observe(card.el));
    const age = Date.now() - Date.parse(result.ts || "");
    if (age >= 0 && age < LIVE_REFETCH_MS) setTimeout(() => this._enqueue(card, ws, result.id), LIVE_REFETCH_MS);
  }

  _seen(records) {
    for (const r of records) {
      if (!r.isIntersecting) continue;
      this.observer.unobserve(r.target);
      const load = this.pending.get(r.target);
      this.pending.delete(r.target);
      load?.();
    }
  }

  _enqueue(card, ws, itemId) {
    this.queue.push([card, ws, itemId]);
    this._pump();
  }

  _pump() {
    while (this.running < MAX_CONCURRENT && this.queue.length) {
      const [card, ws, itemId] = this.queue.shift();
      if (!card.el.isConnected) continue; // the timeline moved on (another session, the cap)
      this.running += 1;
      this.fetchActivity(ws, itemId)
        .then((body) => drawSummary(card, body))
        .catch((err) => console.warn("sidemirror: browser summary", itemId, err))
        .finally(() => {
          this.running -= 1;
          this._pump();
        });
    }
  }
}

/** The summary line (a disclosure button), its entries, and the card's error mark. */
export function drawSummary(card, body) {
  if (!card.el.isConnected || !body?.summary) return;
  const entries = Array.isArray(body.entries) ? body.entries : [];
  const errors = body.summary.errors || 0;
  const list = h("ol", { class: "browser-entries", hidden: true }, entries.map(entryLine));
  const toggle = h("button", {
    type: "button",
    class: ["browser-summary-line", errors && "has-errors"],
    text: summaryText(body.summary),
    attrs: { "aria-expanded": "false", disabled: entries.length ? null : "" },
    on: {
      click: () => {
        list.hidden = !list.hidden;
        toggle.setAttribute("aria-expanded", String(!list.hidden));
      },
    },
  });
  const box = h("div", { class: "browser-summary", dataset: { entries: String(entries.length) } }, toggle, list);
  card.el.querySelector(":scope > .browser-summary")?.remove();
  const sub = card.el.querySelector(":scope > details.subagent");
  card.el.insertBefore(box, sub || null);
  card.el.classList.toggle("browser-errors", errors > 0);
  const head = card.el.querySelector(".tool-head");
  head?.querySelector(".browser-mark")?.remove();
  if (errors && head) {
    const label = `${plural(errors, "error")} in the browser`;
    head.insertBefore(
      h("span", {
        class: "browser-mark",
        title: label,
        attrs: { role: "img", "aria-label": label },
        text: `⚠ ${errors}`,
      }),
      card.status,
    );
  }
}

/** "from Claude: click e5 · turn 4" for an activity entry linked to a tool call. */
export function backLinkText(link) {
  const who = AGENTS[link.agent] || link.agent || "the agent";
  return `from ${who}: ${link.label || link.name} · turn ${link.turn}`;
}

/** The back-link button of an Activity row; `open` switches to the Session tab on the call. */
export function backLink(entry, open) {
  const link = entry.link;
  return h("button", {
    type: "button",
    class: ["link-button", "act-backlink"],
    text: backLinkText(link),
    title: `Show this ${link.name} call in its session`,
    on: { click: () => open({ workspace: entry.workspace, session: link.session, itemId: link.item_id }) },
  });
}

/** Scroll the timeline to an item once it is drawn (it may still be loading), focus it, and
 * flash it so the eye finds it. Resolves to whether it was found. */
export function revealItem(list, itemId, timeoutMs = 10000) {
  const find = () => list.querySelector(`[data-item-id="${CSS.escape(itemId)}"]`);
  const show = (el) => {
    el.closest("details")?.setAttribute("open", "");
    el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
    el.classList.add("flash");
    setTimeout(() => el.classList.remove("flash"), 2000);
    return true;
  };
  const now = find();
  if (now) return Promise.resolve(show(now));
  return new Promise((resolve) => {
    const watch = new MutationObserver(() => {
      const el = find();
      if (!el) return;
      watch.disconnect();
      clearTimeout(timer);
      resolve(show(el));
    });
    const timer = setTimeout(() => {
      watch.disconnect();
      resolve(false);
    }, timeoutMs);
    watch.observe(list, { childList: true, subtree: true });
  });
}
