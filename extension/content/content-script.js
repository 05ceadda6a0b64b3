// Sidemirror page overlay (content script, top frame only), on the sites the user turned it on
// for: registered per site by the service worker (lib/worker/overlay-sites.js), and injected into
// tabs already open when the user turns it on. When it is turned off, the worker answers "off":
// the overlay goes away and this script stops asking until it is injected again.
//
// While the companion server knows element refs for this page, small inert badges mark the
// referenced elements (found by CSS selector, else by role + accessible name), and the element
// the agent last acted on flashes briefly. Data comes from the service worker (message
// `pageOverlay`), which holds the token and asks the server about *this* page's URL; this script
// never sees the token and makes no network request. Nothing is shown while disconnected.
//
// Isolation: one `<sidemirror-overlay>` element (aria-hidden, pointer-events: none, styled
// !important by content-script.css) holding an open shadow root; badge text is set with
// textContent. The shadow root is open so tests can read it; everything in it is derived from
// this page's own elements (ref ids, roles, names), so the page learns nothing new from it.

(() => {
  // Injected again into a page that has it (turned off, then on): wake the one already here.
  if (globalThis.__sidemirrorOverlay?.wake()) return;
  globalThis.__sidemirrorOverlay = { wake };

  const POLL_REFS_MS = 1500; // refs known: follow the agent closely
  const POLL_IDLE_MS = 3000; // connected, nothing for this page yet
  const POLL_OFF_MS = 8000; // not connected
  const FLASH_MS = 1600;
  const FRESH_MS = 5 * 60 * 1000; // flash an action seen on first load only if this recent
  const HOST_TAG = "sidemirror-overlay";

  const STYLE = `
    :host { all: initial; }
    .badge, .flash { position: fixed; pointer-events: none; box-sizing: border-box; }
    .badge {
      font: 600 10px/14px ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, monospace;
      padding: 0 4px; border-radius: 4px; white-space: nowrap; letter-spacing: 0;
      color: #fff; background: #0b57d0; box-shadow: 0 0 0 1px rgb(255 255 255 / 85%), 0 1px 3px rgb(0 0 0 / 35%);
      opacity: 0.92; transform: translateY(-60%); z-index: 1;
    }
    .badge.acted { background: #c2410c; }
    .flash {
      border: 2px solid #f97316; border-radius: 4px; background: rgb(249 115 22 / 14%);
      box-shadow: 0 0 0 4px rgb(249 115 22 / 28%);
      animation: sidemirror-flash ${FLASH_MS}ms ease-out forwards;
    }
    @keyframes sidemirror-flash { 0%, 55% { opacity: 1; } 100% { opacity: 0; } }
    @media (prefers-reduced-motion: reduce) { .flash { animation-duration: 1ms; animation-delay: ${FLASH_MS - 1}ms; } }
  `;

  let host = null;
  let root = null;
  let badges = []; // {el, target}
  let flash = null; // {el, target}
  let lastActedId = null;
  let firstReply = true;
  let timer = null;
  let frame = 0;
  let dead = false; // the extension was reloaded or removed: this script is orphaned
  let off = false; // the user turned the overlay off for this site

  // --- the overlay DOM ---

  function ensureHost() {
    if (host && host.isConnected) return;
    host = document.createElement(HOST_TAG);
    host.setAttribute("aria-hidden", "true");
    root = host.attachShadow({ mode: "open" });
    try {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLE);
      root.adoptedStyleSheets = [sheet];
    } catch {
      const style = document.createElement("style");
      style.textContent = STYLE;
      root.append(style);
    }
    document.documentElement.append(host);
  }

  function clearAll() {
    badges = [];
    flash = null;
    if (host) host.remove();
    host = null;
    root = null;
  }

  function render(refs, acted) {
    const found = [];
    for (const r of refs) {
      const target = findElement(r);
      if (target) found.push({ ref: r, target });
    }
    if (!found.length) {
      clearAll();
      return;
    }
    ensureHost();
    for (const b of badges) b.el.remove();
    badges = found.map(({ ref, target }) => {
      const el = document.createElement("span");
      el.className = acted && acted.ref === ref.ref ? "badge acted" : "badge";
      el.textContent = ref.ref;
      el.dataset.ref = ref.ref;
      root.append(el);
      return { el, target };
    });
    if (acted && acted.id !== lastActedId) {
      const fresh = !firstReply || Date.now() - Date.parse(acted.ts || 0) < FRESH_MS;
      lastActedId = acted.id;
      const hit = found.find((f) => f.ref.ref === acted.ref);
      if (hit && fresh) showFlash(hit.target, acted.ref);
    }
    place();
  }

  function showFlash(target, ref) {
    if (flash) flash.el.remove();
    const el = document.createElement("div");
    el.className = "flash";
    el.dataset.ref = ref;
    root.append(el);
    flash = { el, target };
    setTimeout(() => {
      if (flash?.el === el) flash = null;
      el.remove();
    }, FLASH_MS + 100);
  }

  function place() {
    frame = 0;
    const vw = document.documentElement.clientWidth;
    const vh = document.documentElement.clientHeight;
    for (const { el, target } of badges) {
      const r = target.isConnected ? target.getBoundingClientRect() : null;
      const visible = r && (r.width || r.height) && r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw;
      el.style.display = visible ? "" : "none";
      if (!visible) continue;
      el.style.left = `${Math.max(0, Math.min(vw - 24, r.left - 2))}px`;
      el.style.top = `${Math.max(7, r.top)}px`;
    }
    if (flash) {
      const r = flash.target.getBoundingClientRect();
      Object.assign(flash.el.style, {
        left: `${r.left - 3}px`,
        top: `${r.top - 3}px`,
        width: `${r.width + 6}px`,
        height: `${r.height + 6}px`,
      });
    }
  }

  function schedulePlace() {
    if (!frame && (badges.length || flash)) frame = requestAnimationFrame(place);
  }

  addEventListener("scroll", schedulePlace, { capture: true, passive: true });
  addEventListener("resize", schedulePlace, { passive: true });

  // --- finding elements ---

  const ROLE_SELECTORS = {
    button:
      'button, input[type="button" i], input[type="submit" i], input[type="reset" i], input[type="image" i], summary, [role="button"]',
    link: "a[href], area[href], [role=link]",
    textbox:
      'input:not([type]), input[type="text" i], input[type="email" i], input[type="tel" i], input[type="url" i], input[type="password" i], textarea, [role=textbox], [contenteditable=""], [contenteditable="true" i]',
    searchbox: 'input[type="search" i], [role=searchbox]',
    checkbox: 'input[type="checkbox" i], [role=checkbox]',
    radio: 'input[type="radio" i], [role=radio]',
    combobox: "select:not([multiple]):not([size]), [role=combobox]",
    listbox: "select[multiple], select[size], datalist, [role=listbox]",
    option: "option, [role=option]",
    heading: "h1, h2, h3, h4, h5, h6, [role=heading]",
    img: "img, svg[role=img], [role=img]",
    image: "img, [role=img]",
    spinbutton: 'input[type="number" i], [role=spinbutton]',
    slider: 'input[type="range" i], [role=slider]',
    list: "ul, ol, [role=list]",
    listitem: "li, [role=listitem]",
    navigation: "nav, [role=navigation]",
    main: "main, [role=main]",
    form: "form, [role=form]",
    dialog: "dialog, [role=dialog]",
    table: "table, [role=table]",
    row: "tr, [role=row]",
    cell: "td, [role=cell], [role=gridcell]",
    columnheader: "th, [role=columnheader]",
    article: "article, [role=article]",
    region: "section[aria-label], section[aria-labelledby], [role=region]",
    paragraph: "p, [role=paragraph]",
  };

  function findElement(r) {
    if (r.selector) {
      try {
        const el = document.querySelector(r.selector);
        if (el) return el;
      } catch {
        /* not CSS (a Playwright or XPath selector): fall back to role + name */
      }
    }
    if (!r.role && !r.name) return null;
    const role = String(r.role || "").toLowerCase();
    const selector = ROLE_SELECTORS[role] || (/^[a-z]+$/.test(role) ? `[role="${role}"]` : "*");
    let candidates;
    try {
      candidates = [...document.querySelectorAll(selector)];
    } catch {
      return null;
    }
    if (role && !ROLE_SELECTORS[role]) candidates = candidates.filter((el) => el.getAttribute("role") === role);
    if (!r.name) return candidates.find(isShown) || null;
    const want = norm(r.name);
    let partial = null;
    for (const el of candidates) {
      const name = norm(accessibleName(el));
      if (name === want && isShown(el)) return el;
      if (!partial && name && (name.includes(want) || want.includes(name)) && isShown(el)) partial = el;
    }
    return partial;
  }

  function isShown(el) {
    const r = el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  }

  function norm(s) {
    return String(s || "")
      .replace(/\s+/g, " ")
      .trim()
      .toLowerCase();
  }

  function accessibleName(el) {
    const by = el.getAttribute("aria-labelledby");
    if (by) {
      const text = by
        .split(/\s+/)
        .map((id) => document.getElementById(id)?.textContent || "")
        .join(" ");
      if (norm(text)) return text;
    }
    const label = el.getAttribute("aria-label");
    if (label && norm(label)) return label;
    if (el.labels && el.labels.length) return [...el.labels].map((l) => l.textContent).join(" ");
    if (el.tagName === "IMG" || el.tagName === "AREA") return el.getAttribute("alt") || el.title || "";
    if (el.tagName === "INPUT" && /^(button|submit|reset)$/i.test(el.type)) return el.value || el.type;
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return el.getAttribute("placeholder") || el.title || "";
    if (el.tagName === "SELECT") return el.title || "";
    return el.textContent || el.title || "";
  }

  // --- talking to the worker ---

  function wake() {
    if (dead || !chrome.runtime?.id) return false; // orphaned: let the new injection take over
    off = false;
    schedule(0);
    return true;
  }

  async function poll() {
    timer = null;
    if (dead || off) return;
    if (document.visibilityState !== "visible") return; // resumes on visibilitychange
    let reply;
    try {
      reply = await chrome.runtime.sendMessage({ type: "pageOverlay" });
    } catch {
      // The extension was reloaded or removed: this script is orphaned.
      dead = true;
      clearAll();
      return;
    }
    const data = reply?.ok ? reply.data : null;
    if (data?.off) {
      off = true;
      clearAll();
      return;
    }
    const refs = data?.connected ? data.refs || [] : [];
    if (refs.length) render(refs, data.acted || null);
    else clearAll();
    firstReply = false;
    schedule(refs.length ? POLL_REFS_MS : data?.connected ? POLL_IDLE_MS : POLL_OFF_MS);
  }

  function schedule(ms) {
    clearTimeout(timer);
    timer = setTimeout(poll, ms);
  }

  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && !dead && !off) schedule(0);
  });

  schedule(0);
})();
