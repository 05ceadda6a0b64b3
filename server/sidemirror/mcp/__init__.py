"""The MCP endpoint (Streamable HTTP): JSON-RPC framing, the tools, and their schemas."""
