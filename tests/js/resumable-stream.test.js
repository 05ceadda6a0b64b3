// The resumable stream's own rules, with the browser's parts played by small fakes (the e2e
// suite runs it against the real server): a fresh ticket per connection, the last id seen sent
// back on reconnect, events of a closed source ignored, capped backoff, and no retry once
// stopped.
import assert from "node:assert/strict";
import { test } from "node:test";

const sources = []; // every EventSource opened, in order
class FakeEventSource {
  constructor(url) {
    this.url = new URL(url);
    this.listeners = new Map();
    this.closed = false;
    sources.push(this);
  }
  addEventListener(type, fn) {
    this.listeners.set(type, fn);
  }
  close() {
    this.closed = true;
  }
  /** What the server sends: one event with its `id:` line. */
  emit(type, data, id = "") {
    this.listeners.get(type)?.({ data: JSON.stringify(data), lastEventId: id });
  }
}

let tickets = 0;
const checks = [];
globalThis.EventSource = FakeEventSource;
globalThis.chrome = {
  storage: {
    session: {
      get: async () => ({
        status: { state: "connected", port: 47999 },
        token: { value: "t".repeat(43), panel: null },
      }),
    },
  },
  runtime: { sendMessage: async (message) => (checks.push(message.type), { ok: true, data: {} }) },
};
globalThis.fetch = async (url, init) => {
  assert.equal(new URL(url).pathname, "/api/ticket");
  assert.equal(init.method, "POST");
  tickets += 1;
  return new Response(JSON.stringify({ ticket: `ticket-${tickets}` }), {
    status: 200,
    headers: { "Content-Type": "application/json" },
  });
};

const { ResumableStream, backoffDelay, BACKOFF_MIN_MS, BACKOFF_MAX_MS } =
  await import("../../extension/lib/page/resumable-stream.js");

/** Resolves once `predicate()` is true, checking after each turn of the event loop. */
async function until(predicate) {
  for (let i = 0; i < 1000; i += 1) {
    if (predicate()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error("the state never came");
}

function stream() {
  const messages = [];
  const states = [];
  const s = new ResumableStream({
    path: "/api/workspace/ws/session/s1/stream",
    events: ["item", "reset"],
    on: { message: (type, data) => messages.push([type, data]), state: (state) => states.push(state) },
    share: false,
  });
  return { s, messages, states };
}

test("backoff grows, stays within ±20 % of its step, and is capped", () => {
  for (let attempt = 0; attempt < 12; attempt += 1) {
    const step = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** attempt);
    for (let i = 0; i < 50; i += 1) {
      const delay = backoffDelay(attempt);
      assert.ok(delay >= Math.floor(step * 0.8) && delay <= Math.ceil(step * 1.2), `${attempt}: ${delay}`);
    }
  }
  assert.ok(backoffDelay(40) <= BACKOFF_MAX_MS * 1.2);
});

test("a dropped stream reconnects with a fresh ticket and the last id it saw", async () => {
  const { s, messages, states } = stream();
  const before = sources.length;
  s.start();
  await until(() => sources.length === before + 1);
  const first = sources.at(-1);
  assert.equal(first.url.searchParams.get("last_event_id"), null);
  first.onopen();
  assert.equal(states.at(-1), "live");
  first.emit("item", { id: "s1.1", text: "one" }, "s1.1");
  first.emit("item", { id: "s1.2", text: "two" }, "s1.2");

  first.onerror(); // the server went away
  assert.ok(first.closed);
  assert.equal(states.at(-1), "reconnecting");
  assert.ok(checks.includes("checkNow"), "the worker is asked who answers on the port now");
  s.retryNow(); // skip the backoff wait
  await until(() => sources.at(-1) !== first);
  const second = sources.at(-1);
  assert.equal(second.url.searchParams.get("last_event_id"), "s1.2");
  assert.notEqual(second.url.searchParams.get("ticket"), first.url.searchParams.get("ticket"));

  first.emit("item", { id: "s1.9", text: "late, from the old connection" }, "s1.9");
  second.onopen();
  second.emit("item", { id: "s1.3", text: "three" }, "s1.3");
  assert.deepEqual(
    messages.map(([, data]) => data.text),
    ["one", "two", "three"],
  );
  s.stop();
  assert.equal(states.at(-1), "stopped");
});

test("a malformed message is skipped and the stream goes on", async () => {
  const { s, messages } = stream();
  const before = sources.length;
  s.start();
  await until(() => sources.length === before + 1);
  const source = sources.at(-1);
  source.onopen();
  source.listeners.get("item")({ data: "{not json", lastEventId: "s1.5" });
  source.emit("item", { id: "s1.6", text: "six" }, "s1.6");
  assert.deepEqual(messages, [["item", { id: "s1.6", text: "six" }]]);
  s.stop();
});

test("once stopped, an error schedules no reconnect", async () => {
  const { s } = stream();
  const before = sources.length;
  s.start();
  await until(() => sources.length === before + 1);
  const source = sources.at(-1);
  s.stop();
  source.onerror();
  s.retryNow();
  await new Promise((resolve) => setImmediate(resolve)); // a reconnect would have begun by now
  assert.equal(sources.length, before + 1);
  assert.equal(s.timer, null);
});
