// Where the page overlay runs: only on sites the user turned it on for (KEYS.overlaySites).
//
// Installing the extension grants no access to the user's websites. Turning the overlay on for a
// site (the Activity tab's switch) first asks Chrome for that one origin — the page calls
// chrome.permissions.request inside the click, which needs the user's gesture — then asks this
// worker to register the content script for that origin (it persists across browser restarts)
// and to inject it into the site's tabs already open. Turning it off unregisters the script and
// gives the permission back. Loopback origins are covered by the install-time host permission,
// so Chrome asks nothing for them and they cannot be given back; the switch is what counts.

import { KEYS } from "../shared/config.js";
import { originOf, patternOf } from "../shared/sites.js";

const SCRIPT = { js: ["content/content-script.js", "content/page-events.js"], css: ["content/content-script.css"] };
// In the page's own world, from the start, to see its errors (content/page-events-main.js).
const MAIN_SCRIPT = { js: ["content/page-events-main.js"], world: "MAIN", runAt: "document_start" };
const ID_PREFIX = "overlay ";
const MAIN_PREFIX = "overlay-page ";
const originOfId = (id) =>
  [ID_PREFIX, MAIN_PREFIX].map((p) => (id.startsWith(p) ? id.slice(p.length) : null)).find(Boolean);

export async function enabledSites() {
  const sites = (await chrome.storage.local.get(KEYS.overlaySites))[KEYS.overlaySites];
  return Array.isArray(sites) ? sites : [];
}

/** Whether the overlay is on for the site of `url`. */
export async function isOn(url) {
  const origin = originOf(url);
  return Boolean(origin) && (await enabledSites()).includes(origin);
}

function checkedOrigin(value) {
  const origin = originOf(value);
  if (!origin || origin !== value)
    throw Object.assign(new Error(`not a site origin: ${JSON.stringify(value)}`), { code: "invalid_origin" });
  return origin;
}

/** Turn the overlay on for `origin`; Chrome must already have granted it. Resolves to the sites. */
export async function enable(value) {
  const origin = checkedOrigin(value);
  if (!(await chrome.permissions.contains({ origins: [patternOf(origin)] }))) {
    throw Object.assign(new Error(`Chrome has not granted access to ${origin}`), { code: "not_granted" });
  }
  const sites = await enabledSites();
  if (!sites.includes(origin)) await chrome.storage.local.set({ [KEYS.overlaySites]: [...sites, origin] });
  await register(origin);
  await injectOpenTabs(origin);
  return enabledSites();
}

/** Turn the overlay off for `origin` and give its permission back. Resolves to the sites. */
export async function disable(value) {
  const origin = checkedOrigin(value);
  await forget([origin]);
  // Open tabs keep their injected script, which asks before every look-up: it now hears "off".
  await chrome.permissions.remove({ origins: [patternOf(origin)] }).catch(() => {}); // loopback is required: stays
  return enabledSites();
}

/** Chrome took permissions away (chrome://extensions, or our own remove): those sites are off. */
export async function onPermissionsRemoved(removed) {
  const patterns = new Set(removed?.origins || []);
  const gone = (await enabledSites()).filter((o) => patterns.has(patternOf(o)));
  if (gone.length) await forget(gone);
}

/** Make the registered scripts match the sites (at install and browser start). */
export async function sync() {
  const sites = await enabledSites();
  const granted = [];
  for (const origin of sites) {
    if (await chrome.permissions.contains({ origins: [patternOf(origin)] })) granted.push(origin);
  }
  if (granted.length !== sites.length) await chrome.storage.local.set({ [KEYS.overlaySites]: granted });
  const registered = await chrome.scripting.getRegisteredContentScripts();
  const stale = registered.filter((s) => originOfId(s.id) && !granted.includes(originOfId(s.id)));
  if (stale.length) await chrome.scripting.unregisterContentScripts({ ids: stale.map((s) => s.id) });
  for (const origin of granted) await register(origin);
}

async function forget(origins) {
  const sites = await enabledSites();
  await chrome.storage.local.set({ [KEYS.overlaySites]: sites.filter((o) => !origins.includes(o)) });
  const ids = origins.flatMap((o) => [ID_PREFIX + o, MAIN_PREFIX + o]);
  const registered = await chrome.scripting.getRegisteredContentScripts({ ids });
  if (registered.length) await chrome.scripting.unregisterContentScripts({ ids: registered.map((s) => s.id) });
}

async function register(origin) {
  const id = ID_PREFIX + origin;
  const mainId = MAIN_PREFIX + origin;
  const have = new Set((await chrome.scripting.getRegisteredContentScripts({ ids: [id, mainId] })).map((s) => s.id));
  const matches = [patternOf(origin)];
  const scripts = [
    have.has(id)
      ? null
      : { id, matches, ...SCRIPT, runAt: "document_idle", allFrames: false, persistAcrossSessions: true },
    have.has(mainId) ? null : { id: mainId, matches, ...MAIN_SCRIPT, allFrames: false, persistAcrossSessions: true },
  ].filter((s) => s !== null);
  if (scripts.length)
    await chrome.scripting.registerContentScripts(/** @type {chrome.scripting.RegisteredContentScript[]} */ (scripts));
}

/** The registered script runs on the next load; tabs already showing the site get it now. */
async function injectOpenTabs(origin) {
  const tabs = await chrome.tabs.query({ url: patternOf(origin) });
  await Promise.all(
    tabs.map(async (tab) => {
      try {
        await chrome.scripting.insertCSS({ target: { tabId: tab.id }, files: SCRIPT.css });
        await chrome.scripting.executeScript({ target: { tabId: tab.id }, files: MAIN_SCRIPT.js, world: "MAIN" });
        await chrome.scripting.executeScript({ target: { tabId: tab.id }, files: SCRIPT.js });
      } catch (err) {
        console.warn("sidemirror: could not add the overlay to an open tab", err.message);
      }
    }),
  );
}
