// Sidemirror page events, the page's half (runs in the page's own JavaScript world, only on the
// sites the user turned the overlay on for; lib/worker/overlay-sites.js registers it). What the
// browser's DevTools would show as errors — console.error, uncaught exceptions and rejections,
// fetch/XHR requests that failed — is handed to the extension's isolated script
// (content/page-events.js) with window.postMessage, without chrome.debugger (no "started
// debugging this browser" banner). Nothing here talks to the network or reads the token; the
// page could forge these messages, so the other side treats them as the page's own word and
// rate-limits them.

(() => {
  if (/** @type {any} */ (window).__sidemirrorPageEvents) return; // injected again: the first copy is listening
  Object.defineProperty(window, "__sidemirrorPageEvents", { value: true });
  const MARK = "__sidemirrorPageEvent";
  const target = location.origin === "null" ? "*" : location.origin;
  const text = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.stack?.split("\n")[0] || String(v);
    try {
      return JSON.stringify(v) ?? String(v);
    } catch {
      return String(v);
    }
  };
  // The first frame of a stack that is not this script's: where the page logged or threw.
  const frameOf = (stack) => {
    for (const line of String(stack || "")
      .split("\n")
      .slice(1)) {
      const t = line.trim();
      if (t.startsWith("at ") && !t.includes("page-events-main.js")) return t;
    }
    return null;
  };
  const post = (event) => {
    try {
      window.postMessage({ [MARK]: 1, ...event }, target);
    } catch {
      /* a value that cannot be cloned: nothing to report */
    }
  };

  const consoleError = console.error;
  console.error = function (...args) {
    post({ kind: "console", text: args.map(text).join(" ").slice(0, 2000), frame: frameOf(new Error().stack) });
    return consoleError.apply(this, args);
  };
  window.addEventListener("error", (ev) => {
    if (!(ev instanceof ErrorEvent)) return; // a resource that failed to load: not an exception
    const where = ev.filename ? `at ${ev.filename}:${ev.lineno}:${ev.colno}` : null;
    post({ kind: "exception", text: text(ev.error ?? ev.message), frame: frameOf(ev.error?.stack) || where });
  });
  window.addEventListener("unhandledrejection", (ev) => {
    post({ kind: "exception", text: `Uncaught (in promise) ${text(ev.reason)}`, frame: frameOf(ev.reason?.stack) });
  });

  const pageFetch = window.fetch;
  window.fetch = async function (input, init) {
    const method = String(init?.method || (input instanceof Request ? input.method : "GET")).toUpperCase();
    const url = String(input instanceof Request ? input.url : input);
    let res;
    try {
      res = await pageFetch.apply(this, arguments);
    } catch (err) {
      post({ kind: "request", method, url, text: text(err) });
      throw err;
    }
    if (res.status >= 400)
      post({
        kind: "request",
        method,
        url: res.url || url,
        status: res.status,
        text: `HTTP ${res.status} ${res.statusText}`.trim(),
      });
    return res;
  };
  const open = XMLHttpRequest.prototype.open;
  XMLHttpRequest.prototype.open = function (method, url, ...rest) {
    const req = { method: String(method).toUpperCase(), url: String(url) };
    this.addEventListener("loadend", () => {
      if (this.status >= 400)
        post({
          kind: "request",
          ...req,
          url: this.responseURL || req.url,
          status: this.status,
          text: `HTTP ${this.status} ${this.statusText}`.trim(),
        });
      else if (this.status === 0) post({ kind: "request", ...req, text: "network error" });
    });
    return open.call(this, method, url, ...rest);
  };
})();
