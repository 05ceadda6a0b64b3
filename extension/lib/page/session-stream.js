// A resumable session stream (docs/api.md): `hello`, then `snapshot` or an exact replay, then live.
// Reconnection, tickets and backoff live in lib/page/resumable-stream.js.

import { path } from "./client.js";
import { EVENT_TYPES, PROTOCOL_VERSION } from "../shared/protocol.gen.js";
import { ResumableStream } from "./resumable-stream.js";

export class SessionStream extends ResumableStream {
  /**
   * @param {object} opts
   * @param {string} opts.workspace  workspace id
   * @param {string|null} opts.session  session id, or null to follow the workspace's latest
   * @param {number} [opts.limit]  snapshot size
   * @param {object} opts.on  handlers: message(type, data), state(state, info)
   */
  constructor({ workspace, session = null, limit = 500, on }) {
    super({ path: path.stream(workspace), events: EVENT_TYPES, on, liveOnOpen: false });
    this.workspace = workspace;
    this.session = session;
    this.limit = limit;
  }

  params() {
    return { session: this.session, limit: this.limit };
  }

  _onControl(type, data, ev) {
    if (type === "hello") {
      if (data.protocol !== PROTOCOL_VERSION) {
        this.stop();
        this.on.message("protocol_mismatch", { server: data.protocol, extension: PROTOCOL_VERSION });
        return false;
      }
      this._live({ version: data.version });
    } else if (type === "snapshot") {
      this.lastId = data.cursor || null;
    } else if (type === "reset") {
      this.lastId = null;
    } else if (ev.lastEventId && type !== "session_status") {
      this.lastId = ev.lastEventId;
    }
    return true;
  }
}
