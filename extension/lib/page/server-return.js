// Noticing at once that the server is back, without waiting out a backoff.
//
// A stream that lost its server retries with a growing backoff (resumable-stream.js): after a
// few seconds down its next try is seconds away, so a server restarted in the meantime waited
// up to that long (9.4 s in issue 33's trial). While the server is down, a page instead asks its
// `/health` every RETURN_POLL_MS: a refused connection on 127.0.0.1 costs microseconds, and
// `/health` is public and small. Once it answers "ok" after it was seen down, every stream of
// the page that waits is told, once, and reconnects right away.
//
// One loop per page and port, however many streams wait (the session, activity and attention
// streams all lose the server together): a second waiter joins the running loop. A server that
// answers at the first look was never down (the stream failed for another reason): the watch
// then tells no one, and the stream's backoff alone decides, so a stream that keeps failing
// against a live server cannot turn this into a reconnect storm.

import { probe } from "../worker/server.js"; // the worker's own /health probe (no token)

export const RETURN_POLL_MS = 200;
const HEALTH_TIMEOUT_MS = 1000; // a server that accepts but does not answer counts as down

/** @type {Map<number, ReturnWatch>} */
const watches = new Map();

/**
 * Call `onBack` once the server on `port` answers "ok" after having been seen down. Returns a
 * function that cancels the wait (the stream connected another way, or stopped).
 * @param {number} port
 * @param {() => void} onBack
 * @param {(port: number) => Promise<boolean>} [isUp]  the probe (the tests give their own)
 */
export function whenServerBack(port, onBack, isUp = healthOk) {
  let watch = watches.get(port);
  if (!watch) {
    watch = new ReturnWatch(port, isUp);
    watches.set(port, watch);
  }
  return watch.add(onBack);
}

/** How many ports are watched now (one loop each). */
export function watchCount() {
  return watches.size;
}

class ReturnWatch {
  constructor(port, isUp) {
    this.port = port;
    this.isUp = isUp;
    /** @type {Set<() => void>} */
    this.waiters = new Set();
    this.sawDown = false;
    this.running = false;
  }

  add(onBack) {
    this.waiters.add(onBack);
    if (!this.running) this._loop();
    return () => {
      this.waiters.delete(onBack);
    };
  }

  async _loop() {
    this.running = true;
    try {
      while (this.waiters.size) {
        if (await this.isUp(this.port)) {
          const told = this.sawDown ? [...this.waiters] : [];
          this.waiters.clear();
          for (const fn of told) fn();
          return;
        }
        this.sawDown = true;
        await new Promise((resolve) => setTimeout(resolve, RETURN_POLL_MS));
      }
    } finally {
      this.running = false;
      if (watches.get(this.port) === this) watches.delete(this.port);
    }
  }
}

/** True when `/health` on `port` answers and says "ok" (not "starting"). */
async function healthOk(port) {
  return (await probe(port, HEALTH_TIMEOUT_MS))?.status === "ok";
}
