// The Session tab's full-panel states: connecting, server not running, another server found,
// no sessions yet, and errors. Only constant text and the worker's own messages appear here.

import { KEYS, PORT_RANGE, SERVE_COMMAND } from "../lib/shared/config.js";
import { copyText, h } from "../lib/page/dom.js";
import { icon } from "./icons.js";

export async function stateContent(view, { error = null, checkNow }) {
  const retry = h("button", { type: "button", class: "button", text: "Retry now", on: { click: () => checkNow() } });
  if (view === "connecting") {
    return h(
      "div",
      { class: "state connecting" },
      h("span", { class: "spinner big", attrs: { "aria-hidden": "true" } }),
      h("p", { text: "Connecting to the Sidemirror server…" }),
    );
  }
  if (view === "not_running") {
    const { [KEYS.port]: port } = await chrome.storage.local.get(KEYS.port);
    const command =
      typeof port === "number" && !PORT_RANGE.includes(port) ? `${SERVE_COMMAND} --port ${port}` : SERVE_COMMAND;
    const copied = h("span", { class: "copied", attrs: { role: "status" } });
    const copy = h(
      "button",
      {
        type: "button",
        class: "icon-button",
        attrs: { "aria-label": "Copy command" },
        title: "Copy command",
        on: {
          click: async () => {
            copied.textContent = (await copyText(command)) ? "Copied" : "Copy failed — select the text";
            setTimeout(() => (copied.textContent = ""), 2000);
          },
        },
      },
      icon("copy"),
    );
    return h(
      "div",
      { class: "state not-running" },
      h("h2", { text: "The Sidemirror server isn't running" }),
      h("p", { text: "Start it in a terminal, next to your agent:" }),
      h("div", { class: "command" }, h("code", { class: "serve-command", text: command }), copy),
      copied,
      h("p", {
        class: "muted",
        text: `${port ? `Looking on 127.0.0.1:${port} only (the port set in the toolbar popup)` : `Looking on 127.0.0.1 ports ${PORT_RANGE[0]}–${PORT_RANGE.at(-1)}`}. This panel connects by itself once it starts.`,
      }),
      retry,
    );
  }
  if (view === "other_server") {
    // The offer itself (with its "Use it" buttons) is above the tabs, for every tab.
    return h(
      "div",
      { class: "state other-server" },
      h("h2", { text: "Not connected to your Sidemirror server" }),
      h("p", {
        text: "Another Sidemirror server answers, but this panel does not switch by itself: choose above, or start your server again.",
      }),
      retry,
    );
  }
  if (view === "no_sessions") {
    return h(
      "div",
      { class: "state empty" },
      h("h2", { text: "No sessions yet" }),
      h("p", {
        text: "Start Claude Code (or another agent) in a project. Its session shows up here as soon as it writes its first message.",
      }),
      h(
        "p",
        { class: "muted" },
        "Sidemirror reads ",
        h("code", { text: "~/.claude/projects" }),
        " by default; see ",
        h("code", { text: "sidemirror serve --help" }),
        ".",
      ),
    );
  }
  // error
  const mismatch = error?.code === "protocol_mismatch";
  return h(
    "div",
    { class: "state error-state" },
    h("h2", { text: mismatch ? "Update needed" : "Can't talk to the server" }),
    h("p", { text: error?.message || "Unknown error" }),
    mismatch
      ? null
      : h(
          "p",
          { class: "muted" },
          "If pairing keeps failing, run ",
          h("code", { text: "sidemirror token" }),
          " and paste the token in the Sidemirror toolbar popup.",
        ),
    mismatch ? null : retry,
  );
}
