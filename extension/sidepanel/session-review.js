// Reviewing the session shown in the Session tab: the pinned plan, the context gauge, history
// pages, filter chips, search (this session or all) and the Changes view, and going to an item
// wherever it is (an earlier page, a filtered-out row, another session). The tab owns the
// pickers and the stream; this owns the bar above the timeline and the keys that reach it.

import { h } from "../lib/page/dom.js";
import { AgentFigures } from "./agent-figures.js";
import { ChangesView } from "./changes-view.js";
import { ContextGauge } from "./context-gauge.js";
import { FilterChips } from "./filter-chips.js";
import { HistoryLoader } from "./history-loader.js";
import { installKeys } from "./keyboard-nav.js";
import { KeysHelp } from "./keys-help.js";
import { PlanPin } from "./plan-pin.js";
import { ReviewFold } from "./review-fold.js";
import { SearchView } from "./search-view.js";
import { seqOf } from "./timeline.js";

export class SessionReview {
  /**
   * @param {object} tab  the Session tab: `ws`, `session`, `timeline`, `workspaces`, `sessions`,
   *   and `switchTo(ws, session)` (resolves once that session's snapshot is shown)
   */
  constructor(tab) {
    this.tab = tab;
    const timeline = tab.timeline;
    const where = () => (tab.ws && tab.session ? { ws: tab.ws, session: tab.session } : null);
    this.gauge = new ContextGauge();
    this.agentFigures = new AgentFigures(
      () => (tab.hidden ? null : where()),
      (figures) => this.gauge.offerAgent(figures),
    );
    this.plan = new PlanPin();
    this.history = new HistoryLoader(timeline, where);
    this.filters = new FilterChips(timeline);
    this.search = new SearchView({
      where,
      open: (hit) => this.openHit(hit),
      label: (ws, session) => this._label(ws, session),
    });
    this.changes = new ChangesView({ where, jump: (id) => this.jumpTo(id) });
    // Search, Changes, the plan and the chips fold behind one row (review-fold.js): the feed
    // gets the room.
    this.fold = new ReviewFold({
      plan: this.plan,
      filters: this.filters,
      tools: [
        h("div", { class: "review-tools" }, this.search.form, this.changes.toggle),
        this.search.status,
        this.search.results,
        this.search.more,
        this.changes.el,
      ],
    });
    this.plan.onChange = this.filters.onChange = () => this.fold.update();
    this.el = h("div", { class: "review-bar", hidden: true }, this.fold.row, this.fold.body);
  }

  /** Keys (j/k, g/G, Enter, e/E, /, ?) while focus is inside `root`. */
  installKeys(root) {
    this.keysHelp = new KeysHelp();
    installKeys(root, this.tab.timeline, {
      onError: (dir) => this.filters.jumpToError(dir),
      onSearch: () => {
        this.fold.setOpen(true, false); // "/" reaches the search wherever it is folded
        this.search.focus();
      },
      onStart: () => this.history.toStart(),
      onLatest: () => this.history.goLatest(),
      onHelp: () => this.keysHelp.show(),
    });
  }

  /** Items the timeline took (snapshot: `reset`; a history page or a live item). */
  onItems(items, reset) {
    if (reset) {
      this.plan.reset();
      this.gauge.reset();
      this.agentFigures.reset();
    }
    this.plan.offer(items);
    this.gauge.offer(items);
    this.agentFigures.poke();
  }

  onRender() {
    this.history.onRender();
  }

  onSnapshot(data) {
    this.history.reset(Array.isArray(data.items) ? data.items : [], data.total, data.skipped_bytes);
    this.changes.refresh();
  }

  /** Show an item of this session: earlier pages are loaded until it is held; a filter that
   * hides it is cleared. */
  async jumpTo(id) {
    const tl = this.tab.timeline;
    // The window shows the session's start: an item past it is among the latest (or paged to).
    if (!tl.rowOf(id) && tl.later) await this.history.goLatest();
    if (!tl.rowOf(id) && seqOf(id) < tl.firstSeq) await this.history.until(() => tl.rowOf(id));
    if (!tl.rowOf(id)) return false;
    if (tl.reveal(id)) return true;
    this.filters.set([]);
    return tl.reveal(id);
  }

  /** A search hit: in this session, jump; in another, switch to it and jump once it shows. */
  async openHit(hit) {
    const { tab } = this;
    if (hit.workspace === tab.ws && hit.session === tab.session) return this.jumpTo(hit.item_id);
    if (!(await tab.switchTo(hit.workspace, hit.session))) return false;
    return this.jumpTo(hit.item_id);
  }

  _label(ws, session) {
    const { tab } = this;
    const name = tab.workspaces.find((w) => w.id === ws)?.name || ws;
    const title = ws === tab.ws ? tab.sessions.find((x) => x.id === session)?.title : null;
    return `${name} · ${title || String(session).slice(0, 8)}`;
  }
}
