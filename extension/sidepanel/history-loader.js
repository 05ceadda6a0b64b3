// History: earlier items of the session, a page of 200 at a time (`before=ITEM_ID`, docs/api.md),
// loaded as the reader scrolls near the top, until the server says there are no more
// (`has_more: false`) and the timeline shows "Start of session". A server without history
// answers `before=` with its latest items and no `has_more`: then the timeline says how many
// earlier items it does not show, as it always did.

import { api } from "../lib/page/client.js";
import { sessionPath } from "./review-api.js";

export const PAGE = 200;
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
  }

  /** After a snapshot: is there anything before it? */
  reset(items, total, skippedBytes) {
    this.gen += 1;
    this.loading = null;
    const more = (total || 0) > items.length || skippedBytes > 0;
    this.timeline.setHistory(more ? "more" : items.length ? "start" : null);
    // The first page at once: it tells whether the server has history at all, and it is ready
    // before the reader scrolls up.
    if (more) this.load();
  }

  /** Called after each render: load the previous page when the top is near. */
  onRender() {
    if (this.timeline.history !== "more" || this.loading) return;
    const s = this.timeline.scroller;
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
