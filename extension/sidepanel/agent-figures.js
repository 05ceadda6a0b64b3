// The agent's own figures for the session shown (context window use, cost, rate limits), as its
// status line reported them (`GET /api/statusline/claude`, docs/api.md). Asked when a session is
// shown, soon after new items (a report follows each assistant message), and every few seconds
// while the panel is visible; the gauge shows them as exact (context-gauge.js).

import { api } from "../lib/page/client.js";

const POLL_MS = 5000;
const AFTER_ITEMS_MS = 1000;

export const figuresPath = (session) => `/api/statusline/claude?session=${encodeURIComponent(session)}`;

export class AgentFigures {
  /**
   * @param {() => ({ws: string, session: string} | null)} where  the session shown
   * @param {(figures: object | null) => void} onFigures  the latest figures (null: none yet)
   */
  constructor(where, onFigures) {
    this.where = where;
    this.onFigures = onFigures;
    this.timer = null;
    this.asked = 0; // a newer question makes an older answer stale
  }

  /** A session was shown (or reset): its figures, from none. */
  reset() {
    this.asked += 1;
    this.onFigures(null);
    this._schedule(0);
  }

  /** Items arrived: a report may have come with them. */
  poke() {
    if (this.timer === null || this.dueIn > AFTER_ITEMS_MS) this._schedule(AFTER_ITEMS_MS);
  }

  _schedule(ms) {
    clearTimeout(this.timer);
    this.dueIn = ms;
    this.timer = setTimeout(() => this._ask(), ms);
  }

  async _ask() {
    this.timer = null;
    const here = this.where();
    if (here && !document.hidden) {
      const asked = ++this.asked;
      try {
        const data = await api(figuresPath(here.session));
        const still = this.where();
        if (asked === this.asked && still?.session === here.session) this.onFigures(data?.figures ?? null);
      } catch {
        /* an older server (404) or none: the gauge keeps its estimate */
      }
    }
    if (this.timer === null) this._schedule(POLL_MS);
  }
}
