// The Connect tab: how an MCP client (Claude Code, Cursor, others) reaches this server's MCP
// endpoint, whether it answers right now, and which tools it offers (fetched live with
// `tools/list`). The token is shown masked; "Show" reveals it, "Copy" copies the real snippet.
// The `claude mcp add` command comes right after the endpoint, above the fold of a 420×820
// panel: the tool list, long and growing, goes last.

import { connection } from "../lib/page/client.js";
import { baseUrl } from "../lib/shared/config.js";
import { copyText, h, setText } from "../lib/page/dom.js";
import { MCP_PROTOCOL_VERSION, McpClient } from "../lib/shared/mcp-client.js";
import { icon } from "./icons.js";

const POLL_MS = 3000;
const MASK = "•".repeat(12);

export function createConnectTab(ctx) {
  return new ConnectTab(ctx);
}

class ConnectTab {
  constructor(ctx) {
    this.ctx = ctx;
    this.client = new McpClient(async () => {
      const c = await connection();
      return { base: c.base, token: c.token };
    });
    this.reveal = false;
    this.token = null;
    this.port = null;
    this.toolsFor = null; // base URL the tool list was fetched from
    this.timer = null;
    this.checking = null;
    this._build();
    ctx.onStatus(() => this.shown && this.check());
    addEventListener("pagehide", () => this.client.close({ keepalive: true }));
  }

  _build() {
    this.endpoint = h("code", { id: "mcp-endpoint", class: "endpoint", text: "—" });
    this.copyEndpoint = this._copyButton("Copy endpoint URL", () => this._endpointUrl());
    this.healthText = h("span", { class: "health-text", text: "Checking…" });
    this.health = h(
      "p",
      {
        id: "mcp-health",
        class: "health",
        dataset: { state: "checking" },
        attrs: { role: "status", "aria-live": "polite" },
      },
      h("span", { class: "dot", attrs: { "aria-hidden": "true" } }),
      this.healthText,
    );
    this.protocol = h("dd", { id: "mcp-protocol", text: MCP_PROTOCOL_VERSION });
    this.serverName = h("dd", { id: "mcp-server", text: "—" });
    this.transport = h("dd", { text: "Streamable HTTP (JSON responses)" });

    this.toolsHeading = h("h2", { id: "mcp-tools-heading", class: "section-title", text: "Tools" });
    this.tools = h("ul", { class: "mcp-tools", attrs: { "aria-labelledby": "mcp-tools-heading" } });
    this.toolsNote = h("p", { class: "muted tools-note", text: "Loading the tool list…" });

    this.revealButton = h("button", {
      type: "button",
      class: "button small",
      text: "Show token",
      on: { click: () => this._toggleReveal() },
    });
    this.claudeSnippet = h("code", { id: "snippet-claude" });
    this.jsonSnippet = h("code", { id: "snippet-json" });
    this.copied = h("span", { class: "copied", attrs: { role: "status" } });

    const snippet = (title, id, code, copyLabel, text) =>
      h(
        "div",
        { class: "snippet" },
        h("div", { class: "snippet-head" }, h("h3", { id, text: title }), this._copyButton(copyLabel, text)),
        h("pre", { class: "snippet-code", tabIndex: 0, attrs: { "aria-labelledby": id } }, code),
      );

    this.panel = h(
      "div",
      { class: "connect-tab scroller" },
      h(
        "section",
        { class: "connect-section", attrs: { "aria-labelledby": "mcp-endpoint-heading" } },
        h("h2", { id: "mcp-endpoint-heading", class: "section-title", text: "MCP endpoint" }),
        h("div", { class: "command endpoint-row" }, this.endpoint, this.copyEndpoint),
        this.health,
        h(
          "dl",
          { class: "facts" },
          h("dt", { text: "Protocol" }),
          this.protocol,
          h("dt", { text: "Server" }),
          this.serverName,
          h("dt", { text: "Transport" }),
          this.transport,
        ),
      ),
      h(
        "section",
        { class: "connect-section", attrs: { "aria-labelledby": "snippets-heading" } },
        h(
          "div",
          { class: "snippet-bar" },
          h("h2", { id: "snippets-heading", class: "section-title", text: "Connect an agent" }),
          this.revealButton,
        ),
        snippet("Claude Code", "snippet-claude-title", this.claudeSnippet, "Copy Claude Code command", () =>
          this._claudeCommand(this.token),
        ),
        snippet(
          "JSON config (Cursor, VS Code, others)",
          "snippet-json-title",
          this.jsonSnippet,
          "Copy JSON config",
          () => this._jsonConfig(this.token),
        ),
        this.copied,
        h(
          "p",
          { class: "muted" },
          "The token is the running server's (",
          h("code", { text: "sidemirror token" }),
          "); it changes when the server restarts unless ",
          h("code", { text: "SIDEMIRROR_TOKEN" }),
          " is set. Agents should report what they do in a browser with ",
          h("code", { text: "sidemirror_report_browser_action" }),
          ".",
        ),
      ),
      // Last: the list is long and grows with the server; the command above is what people come for.
      h("section", { class: "connect-section" }, this.toolsHeading, this.toolsNote, this.tools),
    );
    this._renderSnippets();
  }

  _copyButton(label, text) {
    return h(
      "button",
      {
        type: "button",
        class: "icon-button",
        title: label,
        attrs: { "aria-label": label },
        on: {
          click: async () => {
            const value = text();
            const ok = value ? await copyText(value) : false;
            this.copied.textContent = ok
              ? "Copied to the clipboard."
              : value
                ? "Copy failed — select the text instead."
                : "Not connected yet.";
            clearTimeout(this.copiedTimer);
            this.copiedTimer = setTimeout(() => (this.copied.textContent = ""), 2500);
          },
        },
      },
      icon("copy"),
    );
  }

  show() {
    this.shown = true;
    this.check();
    clearInterval(this.timer);
    this.timer = setInterval(() => this.check(), POLL_MS);
  }

  hide() {
    this.shown = false;
    clearInterval(this.timer);
    this.timer = null;
  }

  // --- health and tools ---

  /** Single-flight: overlapping triggers share one check. */
  check() {
    if (!this.checking) this.checking = this._check().finally(() => (this.checking = null));
    return this.checking;
  }

  async _check() {
    let conn;
    try {
      conn = await connection();
    } catch {
      const s = this.ctx.status();
      this.port = s?.port ?? this.port;
      this.token = null;
      this._renderEndpoint();
      this._renderSnippets();
      const why = {
        not_running: "Unreachable — the Sidemirror server isn't running",
        connecting: "Connecting…",
        other_server: "Not connected — choose a Sidemirror server above",
      }[s?.state || "connecting"];
      this._setHealth("error", why || `Not connected — ${s.error?.message || "connection error"}`);
      return;
    }
    this.port = conn.port;
    this.token = conn.token;
    this._renderEndpoint();
    this._renderSnippets();
    try {
      if (this.toolsFor !== conn.base || !this.client.sessionId) {
        await this.client.initialize();
        const tools = await this.client.listTools();
        this.toolsFor = conn.base;
        this._renderTools(tools);
      } else {
        await this.client.ping();
      }
      const info = this.client.serverInfo;
      this.protocol.textContent = this.client.protocolVersion || MCP_PROTOCOL_VERSION;
      setText(this.serverName, info ? `${info.name || "sidemirror"} ${info.version || ""}`.trim() : "—");
      const n = this.toolCount ?? 0;
      this._setHealth("ok", `Reachable — ${n} ${n === 1 ? "tool" : "tools"} available`);
    } catch (err) {
      this.client.sessionId = null;
      this.toolsFor = null;
      this._setHealth("error", `Error — ${err.message}`);
      if (err.status === 0 || err.status === 401 || err.status === 403) this.ctx.checkNow();
    }
  }

  _setHealth(state, text) {
    this.health.dataset.state = state;
    setText(this.healthText, text);
  }

  _renderTools(tools) {
    this.toolCount = tools.length;
    this.toolsHeading.textContent = `Tools (${tools.length})`;
    this.toolsNote.hidden = tools.length > 0;
    this.toolsNote.textContent = "The server offers no tools.";
    this.tools.replaceChildren(
      ...tools.map((t) =>
        h(
          "li",
          { class: "mcp-tool", dataset: { tool: String(t.name || "") } },
          h(
            "div",
            { class: "mcp-tool-head" },
            h("code", { class: "mcp-tool-name", text: t.name || "?" }),
            t.annotations?.readOnlyHint ? h("span", { class: "chip", text: "read-only" }) : null,
          ),
          t.title ? h("p", { class: "mcp-tool-title", text: t.title }) : null,
          t.description ? h("p", { class: "mcp-tool-desc muted", text: t.description }) : null,
          this._params(t.inputSchema),
        ),
      ),
    );
  }

  _params(schema) {
    const props = Object.keys(schema?.properties || {});
    if (!props.length) return null;
    const required = new Set(schema.required || []);
    return h(
      "p",
      { class: "mcp-tool-params" },
      "Parameters: ",
      props.map((p, i) => [i ? ", " : "", h("code", { text: required.has(p) ? `${p}*` : p })]),
    );
  }

  // --- endpoint and snippets ---

  _endpointUrl() {
    return this.port ? `${baseUrl(this.port)}/mcp` : "";
  }

  _renderEndpoint() {
    const url = this._endpointUrl() || "—";
    if (this.endpoint.textContent !== url) this.endpoint.textContent = url;
  }

  _claudeCommand(token) {
    const url = this._endpointUrl();
    if (!url || !token) return "";
    return `claude mcp add --transport http sidemirror ${url} --header "Authorization: Bearer ${token}"`;
  }

  _jsonConfig(token) {
    const url = this._endpointUrl();
    if (!url || !token) return "";
    const config = { mcpServers: { sidemirror: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } } };
    return JSON.stringify(config, null, 2);
  }

  _renderSnippets() {
    const shown = this.token ? (this.reveal ? this.token : MASK) : "TOKEN";
    const url = this._endpointUrl() || "http://127.0.0.1:PORT/mcp";
    const claude = `claude mcp add --transport http sidemirror ${url} --header "Authorization: Bearer ${shown}"`;
    const json = JSON.stringify(
      { mcpServers: { sidemirror: { type: "http", url, headers: { Authorization: `Bearer ${shown}` } } } },
      null,
      2,
    );
    if (this.claudeSnippet.textContent !== claude) this.claudeSnippet.textContent = claude;
    if (this.jsonSnippet.textContent !== json) this.jsonSnippet.textContent = json;
  }

  _toggleReveal() {
    this.reveal = !this.reveal;
    this.revealButton.textContent = this.reveal ? "Hide token" : "Show token";
    this._renderSnippets();
  }
}
