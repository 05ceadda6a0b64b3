"""Sidemirror: mirror a coding agent's session into Chrome's side panel."""

__version__ = "0.1.0"
# The wire protocol's version: `/health` and each stream's `hello` say it (docs/protocol.md).
PROTOCOL_VERSION = 1
