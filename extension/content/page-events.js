// Sidemirror page events, the extension's half (isolated world, with the overlay, on the sites
// the user turned it on for). Takes what content/page-events-main.js saw in the page, only while
// the tab is visible, and sends it to the service worker in small batches (message `pageEvents`);
// the worker reports it to the server as activity entries (lib/worker/page-events.js). The page
// can forge these messages, so they are checked, cut and rate-limited here.

(() => {
  if (globalThis.__sidemirrorPageEventsRelay) return;
  globalThis.__sidemirrorPageEventsRelay = true;
  const MARK = "__sidemirrorPageEvent";
  const KINDS = new Set(["console", "exception", "request"]);
  const BATCH_MS = 300;
  const MAX_PER_MINUTE = 120; // a page logging in a loop is reported, not replayed
  let queue = [];
  let timer = null;
  let sent = []; // times of recent events, for the rate limit
  let stopped = false;

  const str = (v, max) => (typeof v === "string" ? v.slice(0, max) : v == null ? null : String(v).slice(0, max));

  window.addEventListener("message", (ev) => {
    if (stopped || ev.source !== window || !ev.data || ev.data[MARK] !== 1) return;
    if (document.visibilityState !== "visible" || !KINDS.has(ev.data.kind)) return;
    const now = Date.now();
    sent = sent.filter((t) => now - t < 60_000);
    if (sent.length >= MAX_PER_MINUTE) return;
    sent.push(now);
    const d = ev.data;
    queue.push({
      kind: d.kind,
      text: str(d.text, 2000),
      frame: str(d.frame, 500),
      method: str(d.method, 16),
      url: str(d.url, 4000),
      status: Number.isInteger(d.status) ? d.status : null,
      ts: new Date(now).toISOString(),
    });
    timer ||= setTimeout(flush, BATCH_MS);
  });

  async function flush() {
    timer = null;
    const events = queue;
    queue = [];
    if (!events.length) return;
    try {
      const reply = await chrome.runtime.sendMessage({ type: "pageEvents", events });
      if (reply?.data?.off) stopped = true; // the user turned the overlay off for this site
    } catch {
      stopped = true; // the extension was reloaded or removed: this script is orphaned
    }
  }
})();
