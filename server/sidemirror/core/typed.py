"""What browser tools type into a page, wherever it shows up: `[REDACTED:typed]`.

A value typed into a field (a password, a card number, a one-time code) need not look like any
known secret, so it is hidden by where it is, not by its shape. The browser tools' own words
for typing are listed once here; the activity log (activity/entries.py: positional arguments)
and the transcript adapters (sources: a tool call's JSON input, through `hide_typed_values`)
both read them. Typing in code (`page.fill("#pw", "…")`) is `redact_text`'s `typed` rule.
"""

from __future__ import annotations

from typing import Any

TYPED = "[REDACTED:typed]"

# Verbs whose arguments after the first (the target) are typed into the page.
AFTER_TARGET = frozenset(
    {"fill", "type", "press", "select", "select_option", "selectoption", "fill_form",
     "set_value", "setvalue", "input", "type_into"}
)  # fmt: skip
# Verbs without a target: every argument is typed text.
ALL_TYPED = frozenset(
    {"type_text", "insert_text", "inserttext", "keyboard_type", "keyboard.type",
     "keyboard.inserttext", "send_keys", "sendkeys"}
)  # fmt: skip
# Verbs taking only a key: a named key (Enter, Control+A) is kept, anything else is typed text.
KEY_ONLY = frozenset({"press_key", "keyboard.press", "keyboard_press", "key"})
_PREFIXES = ("browser_", "browser.", "page.", "locator.")

# Keys of a typing tool's JSON input that hold what is typed: Playwright MCP `browser_type`
# `text`, `browser_fill_form` `fields[].value`, `browser_select_option` `values`; Chrome
# DevTools MCP `fill` `value`, `fill_form` `elements[].value`.
_TYPED_KEYS = frozenset({"text", "value", "values", "keys"})


def verb_key(command: str) -> str:
    """`mcp__playwright__browser_type`, `page.fill`, `Fill` → `type`, `fill`, `fill`."""
    key = command.strip().lower().replace("-", "_")
    if key.startswith("mcp__"):
        key = key.rsplit("__", 1)[-1]  # mcp__<server>__<tool>
    elif "browser_" in key:
        key = key[key.index("browser_") :]  # Codex's `playwright.browser_type`
    for prefix in _PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) :]
    return key


def is_typing(verb: str) -> bool:
    return verb in AFTER_TARGET or verb in ALL_TYPED or verb in KEY_ONLY


def is_typed_key(key: str) -> bool:
    """Whether a typing tool's input key holds what is typed (`text`, `value`, …)."""
    return key.lower() in _TYPED_KEYS


def scrub_typed(value: Any) -> Any:
    """A copy of a typing tool's JSON input with every typed value hidden (targets kept)."""
    if isinstance(value, dict):
        return {
            k: TYPED if is_typed_key(k) and _present(v) else scrub_typed(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [scrub_typed(v) for v in value]
    return value


def _present(value: Any) -> bool:
    return value not in (None, "", [], {}) and not isinstance(value, bool)


def hide_typed_values(tool_name: str, tool_input: Any) -> Any:
    """`tool_input` with typed values hidden when `tool_name` types into a page; else as is."""
    return scrub_typed(tool_input) if is_typing(verb_key(tool_name)) else tool_input
