// What an activity entry (docs/api.md) means for display: its category, verb and search text.
// Pure functions, no DOM: shared by the Activity tab and its tests' expectations.

const PREFIXES = [
  /^mcp__[\w-]+__browser_/,
  /^mcp__[\w-]+__/,
  /^browser[_.]/,
  /^page\./,
  /^locator\./,
  /^playwright[_.]/,
];

const NAVIGATION = new Set([
  "goto",
  "navigate",
  "open",
  "reload",
  "back",
  "forward",
  "go_back",
  "go_forward",
  "goback",
  "goforward",
  "navigate_back",
  "navigate_forward",
  "new_tab",
  "tab_new",
  "newpage",
  "new_page",
  "close",
  "tab_close",
  "tab_select",
  "tabs",
  "switch_tab",
  "wait_for_url",
  "waitforurl",
  "waitfornavigation",
]);
const INTERACTION = new Set([
  "click",
  "dblclick",
  "double_click",
  "tap",
  "fill",
  "fill_form",
  "type",
  "press",
  "press_key",
  "key",
  "select",
  "select_option",
  "selectoption",
  "check",
  "uncheck",
  "hover",
  "drag",
  "drag_and_drop",
  "drop",
  "upload",
  "file_upload",
  "setinputfiles",
  "focus",
  "blur",
  "scroll",
  "scroll_into_view",
  "mouse",
  "handle_dialog",
  "dialog",
  "clear",
  "set_value",
  "input",
  "type_text",
  "insert_text",
  "keyboard.type",
  "keyboard.press",
  "resize",
]);
const OBSERVATION = new Set([
  "snapshot",
  "screenshot",
  "take_screenshot",
  "evaluate",
  "eval",
  "run_code",
  "get_text",
  "text",
  "gettext",
  "textcontent",
  "innertext",
  "inner_text",
  "title",
  "url",
  "content",
  "html",
  "pdf",
  "console",
  "console_messages",
  "network",
  "network_requests",
  "wait",
  "wait_for",
  "waitfor",
  "waitforselector",
  "find",
  "query",
  "count",
  "is_visible",
  "isvisible",
  "get_attribute",
  "getattribute",
  "accessibility",
  "a11y",
  "cookies",
  "storage",
]);

/** The bare verb: lower case, tool-name prefixes removed (`mcp__playwright__browser_click` → `click`). */
export function verbOf(command) {
  let v = String(command || "")
    .trim()
    .toLowerCase();
  for (const p of PREFIXES) v = v.replace(p, "");
  return v;
}

/**
 * navigation | interaction | observation | error | pending, for an entry and its end (if any).
 * A start without its end is pending; anything that failed is an error.
 */
export function categoryOf(entry, end = null) {
  const e = end || entry;
  if (e.status === "error" || e.type === "error" || (e.type === "command_end" && e.error)) return "error";
  if (entry.type === "command_start" && !end) return "pending";
  if (entry.type === "navigation") return "navigation";
  const verb = verbOf(entry.command);
  if (entry.type === "console") return /error|assert/.test(verb) ? "error" : "observation";
  if (NAVIGATION.has(verb)) return "navigation";
  if (OBSERVATION.has(verb) || verb.startsWith("get_") || verb.startsWith("wait")) return "observation";
  if (INTERACTION.has(verb)) return "interaction";
  return "interaction"; // an agent command we don't know: most are actions
}

export const CATEGORY_LABELS = Object.freeze({
  navigation: "Navigation",
  interaction: "Interaction",
  observation: "Observation",
  error: "Error",
  pending: "Running",
});

/** Lower-cased text the filter box matches: command, args and URL. */
export function searchText(entry, end = null) {
  return [entry.command, ...(entry.args || []), entry.url, end?.url].filter(Boolean).join(" ").toLowerCase();
}

/** The error message to show for an entry (an `error`/`console` observation carries it in args). */
export function errorMessage(entry, end = null) {
  const e = end || entry;
  if (e.error) return String(e.error);
  if (e.type === "error" || (e.type === "console" && categoryOf(entry, end) === "error")) {
    return String(e.result || (e.args || []).join(" ") || "");
  }
  return "";
}

/**
 * Whether an entry is only the browser showing a blank tab or this extension's own pages (the
 * side panel, the popup): not something the agent did, so the Activity feed leaves it out. An
 * entry that names another page (`goto https://…` run from a blank tab) is kept.
 * @param {{url?: string | null, args?: string[] | null}} entry
 * @param {string} ownOrigin  this extension's `chrome-extension://<id>/`
 */
export function isOwnNoise(entry, ownOrigin) {
  if (!entry.url) return false;
  const noise = (/** @type {string} */ u) =>
    u.startsWith("about:blank") || (Boolean(ownOrigin) && u.startsWith(ownOrigin));
  const named = (entry.args || []).filter((a) => typeof a === "string" && /^[a-z][a-z0-9+.-]*:/i.test(a));
  return [entry.url, ...named].every(noise);
}
