// The side panel's real timeline code (extension/sidepanel/timeline.js) fed a session of N
// items, measured in the page (bench/panel.py drives it). Items are shaped like the server's
// (docs/protocol.md): prompts, replies, tool calls with results, turn boundaries.

import { h } from "/extension/lib/page/dom.js";
import { Timeline } from "/extension/sidepanel/timeline.js";

const KINDS = [
  ["Bash", "execute", "npm test -- --watch=false"],
  ["Read", "read", "/src/app/components/SessionList.tsx"],
  ["Edit", "edit", "/src/app/components/SessionList.tsx"],
  ["Grep", "search", "pattern: useEffect"],
];

/** `n` items of a plausible session; ids `1.<seq>`, seq from `from`. */
export function makeItems(n, from = 1) {
  const items = [];
  let seq = from;
  let turn = 1;
  const ts = "2026-12-01T10:00:00.000Z";
  const push = (item) => items.push({ id: `1.${seq}`, seq: seq++, ts, ...item });
  while (items.length < n) {
    push({ type: "user", content: `Prompt ${turn}: make the session list scroll smoothly and keep its position`, truncated: false, full_length: 70 });
    for (let k = 0; k < 4 && items.length < n; k++) {
      const [name, kind, input] = KINDS[(turn + k) % KINDS.length];
      const id = `toolu_${seq}`;
      push({ type: "tool_use", tool_use_id: id, name, kind, input, truncated_input: false, full_length: input.length });
      push({ type: "tool_result", tool_use_id: id, name, output: "ok\n".repeat(1 + (seq % 6)), truncated_output: false, full_length: 12, is_error: seq % 17 === 0, duration_ms: 120 });
    }
    push({ type: "assistant", content: "Done. The list now renders only the rows on screen; `scrollTop` is kept when rows are measured.", truncated: false, full_length: 90 });
    push({ type: "turn_complete", turn, input_tokens: 1200, output_tokens: 340, cache_read_tokens: 50000, cache_write_tokens: 900, cost_usd: 0.02, cost_source: "estimated", model: "claude-sonnet-4-5", duration_ms: 4200, status: "ok" });
    turn += 1;
  }
  return items.slice(0, n);
}

const painted = () => new Promise((resolve) => requestAnimationFrame(() => {
  // After the frame's rendering steps: the next task runs once it is painted.
  const ch = new MessageChannel();
  ch.port1.onmessage = () => resolve(performance.now());
  ch.port2.postMessage(0);
}));

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : null;
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] : null;
}

let timeline = null;

/** First paint after a snapshot of `n` items arrives (as the SSE data string): parse, build,
 * lay out, paint. Repeated `runs` times on the same timeline (a reconnect's snapshot does this). */
window.firstPaint = async (n, runs = 3, total = n) => {
  const host = document.getElementById("host");
  if (!timeline) {
    const scroller = h("div", { class: "scroller" });
    host.append(scroller);
    timeline = new Timeline(scroller, { fetchFull: async () => ({}), onUnseen: () => {} });
    window.__timeline = timeline;
  }
  // The latest `n` of a session of `total` items (the panel asks for 500; paging back through
  // the whole session ends with all of them held).
  const data = JSON.stringify({ items: makeItems(total).slice(-n), total, cursor: `1.${total}` });
  const times = [];
  for (let r = 0; r < runs; r++) {
    timeline.reset();
    await painted();
    const t0 = performance.now();
    const snap = JSON.parse(data);
    timeline.load(snap.items, snap.total);
    const t1 = await painted();
    times.push(t1 - t0);
  }
  return {
    session_items: total,
    snapshot_items: n,
    first_paint_ms: times.map((t) => Math.round(t * 10) / 10),
    first_paint_p50_ms: Math.round(median(times) * 10) / 10,
    rows_in_dom: timeline.list.childElementCount,
    ids_in_dom: timeline.list.querySelectorAll("[data-item-id]").length,
  };
};

/** The time between two frames here (60 Hz: 16.7 ms), from the median of a few. */
async function frameInterval() {
  const ts = [];
  for (let i = 0; i < 13; i++) ts.push(await new Promise((resolve) => requestAnimationFrame(resolve)));
  return median(ts.slice(1).map((t, i) => t - ts[i]));
}

/** `count` live items appended one at a time to the loaded timeline (followed at the bottom):
 * time from `add()` to the frame that shows it painted, and the script time of that frame.
 *
 * A live item arrives (an SSE message) whenever the server sends it, not in step with the
 * panel's frames: each one here is added at a random point of a frame interval, after the
 * previous one is painted. (Adding each right after the previous frame was painted, as this
 * bench first did, is the worst point: it always waits most of a frame for the next one.) */
window.appends = async (count) => {
  const work = [];
  const total = [];
  const render = timeline.vlist.render.bind(timeline.vlist);
  let spent = 0;
  timeline.vlist.render = (...args) => {
    const t = performance.now();
    render(...args);
    spent += performance.now() - t;
  };
  const interval = await frameInterval();
  let seq = timeline.lastSeq + 1;
  for (let i = 0; i < count; i++) {
    const [item] = makeItems(1, seq);
    seq += 1;
    item.content = `${item.content} BMK${i}`;
    await painted();
    await new Promise((resolve) => setTimeout(resolve, Math.random() * interval));
    spent = 0;
    const t0 = performance.now();
    timeline.add(item);
    const added = performance.now() - t0;
    const t1 = await painted();
    if (!timeline.list.querySelector(`[data-item-id="${item.id}"]`)) throw new Error(`item ${item.id} not rendered`);
    total.push(t1 - t0);
    work.push(added + spent);
  }
  timeline.vlist.render = render;
  const r = (x) => Math.round(x * 10) / 10;
  return {
    appends: count,
    frame_interval_ms: r(interval),
    append_to_painted_p50_ms: r(median(total)),
    append_to_painted_p95_ms: r(pct(total, 95)),
    append_work_p50_ms: r(median(work)),
    append_work_p95_ms: r(pct(work, 95)),
    pinned_at_bottom: timeline.atBottom(),
    rows_in_dom: timeline.list.childElementCount,
  };
};

/** Scrolling up through the held session, `step` px a frame for `frames` frames (a fast
 * wheel or a dragged scrollbar; each frame brings new rows into the DOM): the time between
 * frames, and how many took longer than 1.5 intervals (a dropped frame at 60 fps). */
window.scrolling = async (frames, step = 120) => {
  const interval = await frameInterval();
  const s = timeline.scroller;
  const gaps = [];
  let last = await new Promise((resolve) => requestAnimationFrame(resolve));
  for (let i = 0; i < frames; i++) {
    s.scrollTop -= step;
    const now = await new Promise((resolve) => requestAnimationFrame(resolve));
    gaps.push(now - last);
    last = now;
  }
  const r = (x) => Math.round(x * 10) / 10;
  return {
    frames,
    step_px: step,
    frame_interval_ms: r(interval),
    frame_p50_ms: r(median(gaps)),
    frame_p95_ms: r(pct(gaps, 95)),
    long_frames: gaps.filter((g) => g > interval * 1.5).length,
  };
};

window.benchReady = true;
