// The browse-activity stream (docs/api.md): ring replay (or an exact replay after the cursor), then
// live `activity` events; `gap` {missed, reset} when the cursor fell out of the ring.
// Reconnection, tickets and backoff live in lib/page/resumable-stream.js.

import { path } from "./client.js";
import { ResumableStream } from "./resumable-stream.js";

export const ACTIVITY_EVENTS = Object.freeze(["activity", "gap"]);

export class ActivityStream extends ResumableStream {
  /**
   * @param {object} opts
   * @param {string|null} [opts.workspace]  workspace id, or null for every workspace
   * @param {number} [opts.limit]  how many entries the first replay holds
   * @param {object} opts.on  handlers: message(type, data), state(state, info)
   */
  constructor({ workspace = null, limit = 1000, on }) {
    super({ path: path.activityStream(), events: ACTIVITY_EVENTS, on });
    this.workspace = workspace;
    this.limit = limit;
  }

  params() {
    return { workspace: this.workspace, limit: this.limit };
  }

  /** A fresh connection replays at most `limit` entries: a page that joins later needs no more. */
  _trimReplay(log) {
    return log.length > this.limit ? log.slice(-this.limit) : log;
  }
}
