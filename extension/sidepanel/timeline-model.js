// Where each item of a session goes among the timeline's rows: order and dedupe by seq, tool
// results onto their tool card, sub-agent items under their Task card, live partial text and
// the item that replaces it, and (after a history page) results and sub-agent items that were
// shown on their own finding their card. What is shown, and how, is timeline.js's: it gets told
// through `_replace`, `_stale` and `_refilter`.

import { textNode } from "../lib/page/dom.js";
import { attachResult, settlePending, showProgress, showTurnDuration } from "./item-renderers.js";
import { buildRow, isBuilt, nestElement, newRow } from "./timeline-rows.js";

export class TimelineModel {
  // The view's half (timeline.js builds these): the model reads them, never makes them.
  /** @type {any} */ renderCtx;
  /** @type {import("./virtual-list.js").VirtualList} */ vlist;

  // The view's answers to what the model decides; timeline.js defines each.
  /** A partial row gives way to the item that completes it. @param {any} _old @param {any} _row */
  _replace(_old, _row) {
    throw new Error("Timeline defines _replace");
  }

  /** A row changed while it may not be built. @param {any} _row */
  _stale(_row) {
    throw new Error("Timeline defines _stale");
  }

  /** A row may now pass the view's filter. @param {any} _row */
  _refilter(_row) {
    throw new Error("Timeline defines _refilter");
  }

  /** The rows the view shows. @returns {any[]} */
  _visibleRows() {
    throw new Error("Timeline defines _visibleRows");
  }

  /** Show these rows, keeping the reader's place. @param {any[]} _rows @param {any} _at */
  _view(_rows, _at) {
    throw new Error("Timeline defines _view");
  }

  /** Forget every item. */
  clearModel() {
    this.rows = []; // every top-level row, in order
    this.byId = new Map(); // item id → row (a result's id → its tool row)
    this.tools = new Map(); // tool_use_id → row
    this.running = new Set(); // tool rows with no result yet
    this.deltas = new Map(); // segment_id → partial row
    this.orphans = []; // rows whose tool card or Task was not loaded (yet)
    this.turns = new Map(); // seq → main-thread turn_complete row
    this.durations = new Map(); // turn seq → the agent's own duration of that turn (turn_duration)
    this.lastSeq = 0;
    this.firstSeq = Infinity;
  }

  /** Place a page of earlier items (oldest first) before the rows held; returns the new rows
   * in order. Its turns settle only its own tools. */
  placeEarlier(older) {
    const kept = this.rows;
    const { lastSeq, running } = this;
    this.rows = [];
    this.lastSeq = 0;
    this.running = new Set();
    this.paging = true;
    try {
      for (const item of older) this._add(item);
    } finally {
      this.paging = false;
    }
    for (const row of running) this.running.add(row);
    this.lastSeq = lastSeq;
    this.rows = this.rows.concat(kept);
    this._adoptOrphans();
  }

  _add(item) {
    // Partial text and progress are live only: no id, and the seq of the stored item they follow.
    if (item.type === "assistant_delta" || item.type === "thinking_delta") {
      this._delta(item);
      return true;
    }
    if (item.type === "tool_progress") {
      const row = this.tools.get(item.tool_use_id);
      if (row && !row.result) {
        row.progress = item;
        if (isBuilt(row) && row.card) showProgress(row.card, item);
      }
      return true;
    }
    if (typeof item.seq === "number" && item.seq > 0) {
      // Seqs increase but are not dense (transcripts number items by byte position).
      if (item.seq <= this.lastSeq) {
        console.warn("sidemirror: duplicate item", item.id);
        return false;
      }
      this.lastSeq = item.seq;
      if (item.seq < this.firstSeq) this.firstSeq = item.seq;
    }
    if (item.type === "turn_duration") {
      this._turnDuration(item);
      return true;
    }
    // The complete item takes its partial bubble's place (same segment_id).
    const streamed = item.type === "assistant" || item.type === "thinking";
    const partial = streamed && item.segment_id ? this.deltas.get(item.segment_id) : null;
    if (item.type === "assistant" && !partial && !this.paging) this._dropDeltas();
    if (item.type === "turn_complete" && !item.parent_tool_use_id) {
      // A closed turn leaves no tool running: calls still pending got no result.
      for (const row of this.running) {
        row.settled = true;
        if (isBuilt(row) && row.card) settlePending(row.card);
      }
      this.running.clear();
      if (!this.paging) this._dropDeltas();
      const measured = this.durations.get(item.seq);
      if (measured != null) item.duration_ms = measured;
    }
    if (item.type === "tool_result") {
      const row = this.tools.get(item.tool_use_id);
      if (row && !row.result) {
        this._attach(row, item);
        return true;
      }
    }
    const row = newRow(item);
    if (item.id) this.byId.set(item.id, row);
    if (item.type === "tool_use" && item.tool_use_id) {
      this.tools.set(item.tool_use_id, row);
      this.running.add(row);
    }
    if (item.type === "turn_complete" && !item.parent_tool_use_id) this.turns.set(item.seq, row);
    const parent = item.parent_tool_use_id ? this.tools.get(item.parent_tool_use_id) : null;
    if (partial) {
      this.deltas.delete(item.segment_id);
      this._replace(partial, row);
    } else if (parent) {
      this._nest(parent, row);
    } else {
      if (item.parent_tool_use_id || item.type === "tool_result") this.orphans.push(row);
      this.rows.push(row);
    }
    return true;
  }

  /** The agent's own duration of a turn already shown (Claude Code writes it after the turn
   * closed): the turn's row shows it in place of the wall time. Kept for a turn not loaded yet
   * (a history page brings it). Never a row of its own. */
  _turnDuration(item) {
    this.durations.set(item.turn_seq, item.duration_ms);
    const row = this.turns.get(item.turn_seq);
    if (!row) return;
    row.item.duration_ms = item.duration_ms;
    if (isBuilt(row)) showTurnDuration(row.el, item.duration_ms);
    else this._stale(row);
  }

  _attach(row, result) {
    row.result = result;
    this.running.delete(row);
    this.byId.set(result.id, row);
    if (isBuilt(row) && row.card) attachResult(row.card, result, this.renderCtx);
    else this._stale(row);
    this._refilter(row);
  }

  _nest(parent, row) {
    row.parent = parent;
    (parent.children ||= []).push(row);
    if (isBuilt(parent)) nestElement(parent, buildRow(row, this.renderCtx));
    else this._stale(parent);
    this._refilter(parent);
  }

  _delta(item) {
    let row = this.deltas.get(item.segment_id);
    if (!row) {
      row = newRow(item, true);
      this.deltas.set(item.segment_id, row);
      const parent = item.parent_tool_use_id ? this.tools.get(item.parent_tool_use_id) : null;
      if (parent) this._nest(parent, row);
      else this.rows.push(row);
    }
    row.partial.push(item.text || "");
    if (row.text && isBuilt(row)) row.text.append(textNode(item.text || ""));
    else this._stale(row);
  }

  _dropDeltas() {
    if (!this.deltas.size) return;
    const gone = new Set(this.deltas.values());
    this.deltas.clear();
    for (const row of gone) {
      if (row.parent) {
        row.parent.children = row.parent.children.filter((c) => c !== row);
        row.el?.remove();
      }
    }
    this.rows = this.rows.filter((r) => !gone.has(r));
    this._view(this._visibleRows(), this.vlist.pinned ? "bottom" : "anchor");
  }

  /** After a history page: orphan rows whose card or Task is now loaded move onto it. */
  _adoptOrphans() {
    const gone = new Set();
    for (const row of this.orphans) {
      const item = row.item;
      const tool = item.type === "tool_result" ? this.tools.get(item.tool_use_id) : null;
      const parent = item.parent_tool_use_id ? this.tools.get(item.parent_tool_use_id) : null;
      if (tool && !tool.result) {
        this._attach(tool, item);
        gone.add(row);
      } else if (parent && parent !== row) {
        gone.add(row);
        // Its element may be on screen, at the top level: the list lets it go before the
        // row is built again inside the Task (a stray left behind was shown twice).
        this.vlist.drop(row);
        this._nest(parent, row);
      }
    }
    if (!gone.size) return false;
    this.orphans = this.orphans.filter((r) => !gone.has(r));
    this.rows = this.rows.filter((r) => !gone.has(r));
    return true;
  }
}
