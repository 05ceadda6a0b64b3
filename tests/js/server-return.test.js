// Reconnecting as soon as the server is back (issue 33: 9.4 s after a restart): while it is
// down, a page polls its `/health` in one loop, however many streams wait, and a stream whose
// server answers again connects at once instead of waiting out its backoff. A server that was
// never seen down wakes no one (the backoff stays in charge: no reconnect storm).
import assert from "node:assert/strict";
import { test } from "node:test";

let serverUp = true;
let healthProbes = 0;
let tickets = 0;
const sources = [];
class FakeEventSource {
  constructor(url) {
    this.url = new URL(url);
    this.closed = false;
    sources.push(this);
  }
  addEventListener() {}
  close() {
    this.closed = true;
  }
}
globalThis.EventSource = FakeEventSource;
globalThis.chrome = {
  storage: {
    session: {
      get: async () => ({
        status: { state: "connected", port: 47998 },
        token: { value: "t".repeat(43), panel: null },
      }),
    },
  },
  runtime: { sendMessage: async () => ({ ok: true, data: {} }) },
};
globalThis.fetch = async (url) => {
  const { pathname } = new URL(url);
  if (!serverUp) throw new TypeError("Failed to fetch (connection refused)");
  if (pathname === "/health") {
    healthProbes += 1;
    return Response.json({ app: "sidemirror", status: "ok" });
  }
  assert.equal(pathname, "/api/ticket");
  tickets += 1;
  return Response.json({ ticket: `ticket-${tickets}` });
};

const { whenServerBack, watchCount, RETURN_POLL_MS } = await import("../../extension/lib/page/server-return.js");
const { ResumableStream, backoffDelay } = await import("../../extension/lib/page/resumable-stream.js");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(predicate, ms = 5000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error("the state never came");
    await sleep(5);
  }
}

test("waiters share one loop and are told once when the server is back", async () => {
  const answers = [false, false, true];
  let probes = 0;
  const isUp = async () => {
    probes += 1;
    return answers.shift() ?? true;
  };
  const told = [];
  whenServerBack(5001, () => told.push("a"), isUp);
  whenServerBack(5001, () => told.push("b"), isUp);
  assert.equal(watchCount(), 1, "one loop for the port");
  await until(() => told.length === 2);
  assert.deepEqual(told.sort(), ["a", "b"]);
  assert.equal(probes, 3, "one probe per tick, not one per waiter");
  await sleep(RETURN_POLL_MS * 2);
  assert.equal(told.length, 2, "told once");
  assert.equal(watchCount(), 0, "the loop ends with its waiters");
});

test("a server up at the first look was never down: nobody is woken", async () => {
  let told = 0;
  whenServerBack(
    5002,
    () => (told += 1),
    async () => true,
  );
  await sleep(RETURN_POLL_MS * 2);
  assert.equal(told, 0);
  assert.equal(watchCount(), 0);
});

test("a cancelled wait ends the loop", async () => {
  let probes = 0;
  const cancel = whenServerBack(
    5003,
    () => assert.fail("cancelled"),
    async () => ((probes += 1), false),
  );
  await sleep(RETURN_POLL_MS / 2);
  cancel();
  await sleep(RETURN_POLL_MS * 2);
  const seen = probes;
  await sleep(RETURN_POLL_MS * 2);
  assert.equal(probes, seen, "no probe once nobody waits");
  assert.equal(watchCount(), 0);
});

test("a stream deep in its backoff reconnects within a poll of the server's return", async () => {
  const states = [];
  const make = () =>
    new ResumableStream({
      path: "/workspace/ws/session/stream",
      events: ["item"],
      on: { message() {}, state: (state) => states.push(state) },
      share: false,
    });
  const streams = [make(), make()];
  for (const s of streams) s.start();
  await until(() => sources.length === 2);
  for (const [i, s] of streams.entries()) {
    sources[i].onopen();
    assert.equal(s.state, "live");
  }
  serverUp = false;
  for (const [i, s] of streams.entries()) {
    s.attempt = 8; // down for a while: the next try is ~15 s away
    sources[i].onerror();
    assert.equal(s.state, "reconnecting");
  }
  assert.ok(backoffDelay(8) >= 10_000);
  await sleep(RETURN_POLL_MS * 3); // the watch sees it down
  assert.equal(watchCount(), 1, "both streams wait in one loop");
  const opened = sources.length;
  serverUp = true;
  const back = Date.now();
  await until(() => sources.length === opened + 2, 3000);
  const took = Date.now() - back;
  assert.ok(took < RETURN_POLL_MS * 2 + 200, `reconnected ${took} ms after the server came back`);
  assert.equal(healthProbes, 1, "one /health answer woke both streams");
  for (const s of streams) {
    assert.equal(s.timer, null, "the backoff wait is over");
    s.stop();
  }
});
