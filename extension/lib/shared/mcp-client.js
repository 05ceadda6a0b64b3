// A minimal MCP Streamable HTTP client (protocol 2025-06-18, JSON responses) for the Connect tab
// and the service worker: initialize → notifications/initialized → requests; a 404 or JSON-RPC
// -32001 (session unknown or ended) re-initializes once. Runs in any extension context.

export const MCP_PROTOCOL_VERSION = "2025-06-18";
export const MCP_CLIENT_INFO = Object.freeze({ name: "sidemirror-connect", version: "1" });
const SESSION_NOT_FOUND = -32001;
const TIMEOUT_MS = 8000;

export class McpError extends Error {
  /** status 0 = the server is unreachable; `rpc` = a JSON-RPC error code, if any. */
  constructor(message, { status = 0, code = "mcp_error", rpc = null } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.rpc = rpc;
  }
}

export class McpClient {
  /** @param {() => Promise<{base: string, token: string}>} connect  where and how to reach it */
  constructor(connect) {
    this.connect = connect;
    this.sessionId = null;
    this.base = null;
    this.serverInfo = null;
    this.protocolVersion = null;
    this.instructions = null;
    this.nextId = 1;
  }

  async initialize() {
    this.sessionId = null;
    const { result, headers } = await this._post(
      {
        jsonrpc: "2.0",
        id: this.nextId++,
        method: "initialize",
        params: { protocolVersion: MCP_PROTOCOL_VERSION, capabilities: {}, clientInfo: MCP_CLIENT_INFO },
      },
      false,
    );
    this.sessionId = headers.get("Mcp-Session-Id");
    this.protocolVersion = result?.protocolVersion ?? null;
    this.serverInfo = result?.serverInfo ?? null;
    this.instructions = result?.instructions ?? null;
    await this._post({ jsonrpc: "2.0", method: "notifications/initialized" }, true);
    return result;
  }

  /** A JSON-RPC request on the session; initializes first (and again once if it was lost). */
  async request(method, params) {
    if (!this.sessionId) await this.initialize();
    try {
      return (await this._post({ jsonrpc: "2.0", id: this.nextId++, method, ...(params ? { params } : {}) }, true))
        .result;
    } catch (err) {
      if (!(err instanceof McpError) || !(err.status === 404 || err.rpc === SESSION_NOT_FOUND)) throw err;
      await this.initialize();
      return (await this._post({ jsonrpc: "2.0", id: this.nextId++, method, ...(params ? { params } : {}) }, true))
        .result;
    }
  }

  async listTools() {
    const tools = [];
    let cursor;
    for (let page = 0; page < 20; page++) {
      const result = await this.request("tools/list", cursor ? { cursor } : undefined);
      tools.push(...(Array.isArray(result?.tools) ? result.tools : []));
      cursor = result?.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  ping() {
    return this.request("ping");
  }

  callTool(name, args = {}) {
    return this.request("tools/call", { name, arguments: args });
  }

  /** End the session (DELETE /mcp). `keepalive` lets it outlive a closing page. */
  async close({ keepalive = false } = {}) {
    const id = this.sessionId;
    this.sessionId = null;
    if (!id || !this.base) return;
    const token = (await this.connect().catch(() => null))?.token;
    if (!token) return;
    await fetch(`${this.base}/mcp`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${token}`, "Mcp-Session-Id": id, "MCP-Protocol-Version": MCP_PROTOCOL_VERSION },
      credentials: "omit",
      keepalive,
    }).catch(() => {});
  }

  async _post(message, inSession) {
    const { base, token } = await this.connect();
    if (this.base !== base) {
      this.sessionId = null; // another server (or port): its sessions are not ours
      this.base = base;
    }
    if (inSession && !this.sessionId) throw new McpError("no MCP session", { status: 404 });
    const headers = {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    };
    if (inSession && this.sessionId) {
      headers["Mcp-Session-Id"] = this.sessionId;
      headers["MCP-Protocol-Version"] = this.protocolVersion || MCP_PROTOCOL_VERSION;
    }
    let res;
    try {
      res = await fetch(`${base}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify(message),
        cache: "no-store",
        credentials: "omit",
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw new McpError(`server unreachable (${err.message})`, { code: "unreachable" });
    }
    if (res.status === 202 || res.status === 204) return { result: null, headers: res.headers };
    let body = null;
    try {
      body = await res.json();
    } catch {
      /* not JSON */
    }
    if (!res.ok) {
      const e = body?.error || {};
      throw new McpError(String(e.message || `${res.status} ${res.statusText}`.trim()), {
        status: res.status,
        code: typeof e.code === "string" ? e.code : `http_${res.status}`,
        rpc: typeof e.code === "number" ? e.code : null,
      });
    }
    if (body?.error) {
      throw new McpError(String(body.error.message || "JSON-RPC error"), {
        status: res.status,
        code: "rpc_error",
        rpc: body.error.code ?? null,
      });
    }
    return { result: body?.result ?? null, headers: res.headers };
  }
}
