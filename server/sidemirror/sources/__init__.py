"""Source adapters: each knows one agent's format and emits canonical, redacted items.

`base` says what a source and a converter are; `registry` lists them all; `files/` follows
files and knows no format; one sub-package per agent (`claude/`, `codex/`, `acp/`).
"""
