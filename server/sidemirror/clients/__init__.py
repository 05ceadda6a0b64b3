"""Processes that talk to a running server: `sidemirror ingest`, `acp-tap` and `observe-cdp`.
They find the server through the runtime file (`runtime.py`) and use nothing of its internals
but the clock; everything they send goes through the HTTP API like any other client."""
