// History: earlier items of the session, a page of 200 at a time (`before=ITEM_ID`, docs/api.md),
// loaded as the reader scrolls near the top, until the server says there are no more
// (`has_more: false`) and the timeline shows "Start of session". A server without history
// answers `before=` with its latest items and no `has_more`: then the timeline says how many
// earlier items it does not show, as it always did.
//
// Going to the start of the session ("g", Home) is one request however long it is (`from=start`):
// the session's first page replaces the window, the reader reads on down a page at a time
// (`after=ITEM_ID`) until the window joins the live end, and "Go to latest" (G, End, the
// new-items pill) fetches the latest items again. A server without `from=` pages back to the start.

import { api } from "../lib/page/client.js";
import { sessionPath } from "./review-api.js";

export const PAGE = 200;
const LATEST = 500; // items of the latest page fetched again ("Go to latest"), as a snapshot has
const NEAR_TOP_SCREENS = 1.5; // start loading this many screens before the top is reached

export class HistoryLoader {
  /**
   * @param {import("./timeline.js").Timeline} timeline
   * @param {() => {ws: string, session: string} | null} where  the session shown
   */
  constructor(timeline, where) {
    this.timeline = timeline;
    this.where = where;
    this.loading = null;
    this.gen = 0;
    timeline.onLoadEarlier = () => this.load();
    timeline.onGoStart = () => this.toStart();
    timeline.onLoadLater = () => this.loadLater();
    timeline.onGoLatest = () => this.goLatest();
    this.loadingLater = null;
  }

  /** After a snapshot: is there anything before it? */
  reset(items, total, skippedBytes) {
    this.gen += 1;
    this.loading = null;
    this.loadingLater = null;
    const more = (total || 0) > items.length || skippedBytes > 0;
    this.timeline.setHistory(more ? "more" : items.length ? "start" : null);
    // The first page at once: it tells whether the server has history at all, and it is ready
    // before the reader scrolls up.
    if (more) this.load();
  }

  /** Called after each render: load the previous page when the top is near. */
  onRender() {
    const s = this.timeline.scroller;
    if (this.timeline.later && !this.loadingLater && s.clientHeight > 0) {
      const below = s.scrollHeight - s.scrollTop - s.clientHeight;
      if (below <= s.clientHeight * NEAR_TOP_SCREENS) this.loadLater();
    }
    if (this.timeline.history !== "more" || this.loading) return;
    if (s.clientHeight === 0 || s.scrollTop > s.clientHeight * NEAR_TOP_SCREENS) return;
    if (this.timeline.vlist.pinned && s.scrollHeight > s.clientHeight * 3) return; // following the end
    this.load();
  }

  /** Load one page (single-flight). Resolves to how many items came. */
  load(limit = PAGE) {
    if (this.loading) return this.loading;
    if (this.timeline.history !== "more") return Promise.resolve(0);
    const here = this.where();
    const first = this.timeline.firstItemId();
    if (!here || !first) return Promise.resolve(0);
    const gen = this.gen;
    this.timeline.setHistory("loading");
    this.loading = api(sessionPath(here.ws, { session: here.session, before: first, limit }))
      .then((data) => {
        if (gen !== this.gen) return 0;
        if (typeof data?.has_more !== "boolean") {
          this.timeline.setHistory("unsupported");
          return 0;
        }
        return this.timeline.prepend(Array.isArray(data.items) ? data.items : [], data.has_more ? "more" : "start");
      })
      .catch((err) => {
        if (gen === this.gen) this.timeline.setHistory("more", `Couldn't load earlier items (${err.message})`);
        return 0;
      })
      .finally(() => {
        if (gen === this.gen) this.loading = null;
      });
    return this.loading;
  }

  /** Show the session's first item: its first page replaces the window (one request), or,
   * from a server without `from=`, pages back to it. Resolves to whether the start is shown. */
  async toStart() {
    const tl = this.timeline;
    if (tl.history !== "more" && tl.history !== "loading") return true; // held from the start
    const here = this.where();
    if (!here) return false;
    const gen = ++this.gen; // a page back in flight is of the window this replaces
    this.loading = this.loadingLater = null;
    tl.setHistory("loading");
    let data;
    try {
      data = await api(sessionPath(here.ws, { session: here.session, from: "start", limit: PAGE }));
    } catch (err) {
      if (gen === this.gen) tl.setHistory("more", `Couldn't load the start (${err.message})`);
      return false;
    }
    if (gen !== this.gen) return false;
    if (typeof data?.has_more !== "boolean") {
      tl.setHistory("more");
      return this.until(() => tl.history === "start", 1000);
    }
    tl.showStart(Array.isArray(data.items) ? data.items : [], data.has_more);
    return true;
  }

  /** The page after the window (single-flight). */
  loadLater() {
    if (this.loadingLater) return this.loadingLater;
    const tl = this.timeline;
    const here = this.where();
    const last = tl.lastItemId();
    if (!tl.later || !here || !last) return Promise.resolve(0);
    const gen = this.gen;
    this.loadingLater = api(sessionPath(here.ws, { session: here.session, after: last, limit: PAGE }))
      .then((data) => (gen === this.gen ? tl.appendLater(data.items || [], Boolean(data.has_more)) : 0))
      .catch(() => 0) // the note's "Load later" tries again
      .finally(() => {
        if (gen === this.gen) this.loadingLater = null;
      });
    return this.loadingLater;
  }

  /** Back to the session's latest items (the window showed its start): a snapshot's worth. */
  async goLatest() {
    const tl = this.timeline;
    const here = this.where();
    if (!tl.later || !here) return;
    const gen = ++this.gen;
    const data = await api(sessionPath(here.ws, { session: here.session, limit: LATEST })).catch(() => null);
    if (gen !== this.gen || !tl.later || !Array.isArray(data?.items)) return;
    const held = tl.heldBack;
    tl.load(data.items, data.total, data.skipped_bytes);
    for (const item of held) if (item.id && item.seq > tl.lastSeq) tl.add(item); // came live since
    this.reset(data.items, data.total, data.skipped_bytes);
    tl.scrollToBottom();
  }

  /** Load pages until `found()` or the start of the session (for jumps to an early item). */
  async until(found, limit = 1000) {
    while (!found()) {
      if (this.loading) await this.loading;
      if (found() || this.timeline.history !== "more") break;
      if ((await this.load(limit)) === 0) break;
    }
    return found();
  }
}
