"""Turn a reported browse action (raw JSON) into a valid, redacted, capped `ActivityEntry`.

This is the activity source adapter's boundary: everything past it (the log on
disk, the SSE stream, MCP) only ever sees redacted values. Every string field goes through
`redact_text` (URLs, in `url` or among the arguments, through the same URL rules), and is
redacted *before* it is cut to its length cap, so a cut can never leave a secret's prefix that
no rule recognises any more. Rules on top of `redact_text`:

- typed values: for `fill`/`type`/`press`/`select` (and their Playwright/CDP spellings) every
  argument after the target is `[REDACTED:typed]`, whatever the selector form; a JSON argument
  (Playwright MCP `browser_fill_form` fields, `browser_type` input) keeps its targets and loses
  its typed values; a command given as one string (`"fill @e5 hunter2"`) is split first so the
  value cannot hide in `command`;
- `name=value` / `Header: value` arguments whose name is secret-like, and the argument following
  a bare secret-like name (`header Authorization "Bearer …"`);
- cookie commands: every value after the cookie name.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import datetime
from typing import Any, get_args

from sidemirror.core.clock import now_iso
from sidemirror.core.models import ActivityEntry, ActivityRef, ActivityType
from sidemirror.core.redact import is_secret_key, redact_json, redact_text, redact_url
from sidemirror.core.store import resolve_workspace
from sidemirror.core.truncate import truncate
from sidemirror.core.typed import (
    AFTER_TARGET,
    ALL_TYPED,
    KEY_ONLY,
    TYPED,
    is_typing,
    scrub_typed,
    verb_key,
)

RESULT_MAX_CHARS = 500
ERROR_MAX_CHARS = 2000
ARG_MAX_CHARS = 2000
URL_MAX_CHARS = 8192
COMMAND_MAX_CHARS = 200
ID_MAX_CHARS = 200
REF_MAX_CHARS = 500
MAX_ARGS = 100
MAX_REFS = 1000
COOKIE = "[REDACTED:cookie]"
SECRET = "[REDACTED:secret_field]"

_TYPES: tuple[str, ...] = get_args(ActivityType)
_OBSERVATIONS = ("navigation", "console", "error")

# `keyboard type "…"`: the first argument says which keyboard verb.
_NAMESPACES = ("keyboard",)
_NAMED_KEYS = frozenset(
    {
        "enter",
        "return",
        "tab",
        "escape",
        "esc",
        "backspace",
        "delete",
        "del",
        "space",
        "insert",
        "arrowup",
        "arrowdown",
        "arrowleft",
        "arrowright",
        "up",
        "down",
        "left",
        "right",
        "home",
        "end",
        "pageup",
        "pagedown",
        "capslock",
        "numlock",
        "contextmenu",
    }
    | {f"f{i}" for i in range(1, 25)}
)
_MODIFIERS = frozenset(
    {"control", "ctrl", "shift", "alt", "option", "meta", "cmd", "command", "controlormeta"}
)
# A first argument that names an element rather than being typed text.
_TARGET_LIKE = re.compile(
    r"^(?:@|#|\.|\[|//|\(|e\d+$|(?:css|xpath|text|role|id|ref|label|placeholder|"
    r"data-testid|internal:[a-z-]+)=|[a-zA-Z][\w-]*(?:[#.\[:]|\s*>))"
)
# A header or field name (`Authorization`, `X-Api-Key`, `db.password`). A URL, a path or an
# assignment never is one, even when it ends in a secret-like word (`…&token=abc123SECRET`):
# taking it for a name would pass it through whole and hide the innocent argument after it.
_FIELD_NAME = re.compile(r"[A-Za-z][\w.-]*")
_SECRET_PAIR = re.compile(r"^(?P<name>[\w.-]+)(?P<sep>\s*[=:]\s*)(?P<value>.+)$", re.S)
_COOKIE_SUBCOMMANDS = frozenset({"get", "set", "add", "clear", "delete", "list", "remove"})


def _is_named_key(arg: str) -> bool:
    parts = arg.strip().lower().split("+")
    *mods, last = parts
    if not all(m in _MODIFIERS for m in mods):
        return False
    # A single character is a key only as part of a shortcut (Control+A), never alone.
    return last in _NAMED_KEYS or (bool(mods) and len(last) == 1)


def _redact_typed(key: str, args: list[str]) -> list[str]:
    if not args:
        return []
    if key in _NAMESPACES and args:
        sub = verb_key(f"{key}.{args[0]}")
        return [args[0], *_redact_typed(sub, args[1:])]
    if is_typing(key) and any(_json_container(a) is not None for a in args):
        # Structured input (`browser_fill_form` fields, `browser_type` {ref, text}): keep the
        # targets, hide the typed values, whatever position they came in.
        return [_scrub_json_arg(a) for a in args]
    if key in ALL_TYPED:
        return [TYPED for _ in args]
    if key in KEY_ONLY:
        return [a if _is_named_key(a) else TYPED for a in args]
    if key in AFTER_TARGET:
        if len(args) == 1:
            # One argument: a target (`select @e3`), a key (`press Enter`) or typed text.
            only = args[0]
            keep = _is_named_key(only) if key == "press" else bool(_TARGET_LIKE.match(only))
            return [only if keep else TYPED]
        return [args[0], *(TYPED for _ in args[1:])]
    if "cookie" in key:
        return _redact_cookie_args(args)
    return args


def _redact_cookie_args(args: list[str]) -> list[str]:
    out: list[str] = []
    named = False
    for arg in args:
        if not named and arg.lower() in _COOKIE_SUBCOMMANDS:
            out.append(arg)
        elif arg.lstrip().startswith(("{", "[")):
            out.append(_redact_json_arg(arg, cookie=True))
        elif not named:
            named = True
            name, eq, _ = arg.partition("=")
            out.append(f"{name}={COOKIE}" if eq else arg)
        else:
            out.append(COOKIE)
    return out


def _json_container(arg: str) -> dict[str, Any] | list[Any] | None:
    if not arg.lstrip().startswith(("{", "[")):
        return None
    try:
        value = json.loads(arg)
    except ValueError:
        return None
    return value if isinstance(value, dict | list) else None


def _scrub_json_arg(arg: str) -> str:
    """A typing command's argument: JSON with its typed values hidden, other text whole."""
    value = _json_container(arg)
    if value is None:
        return TYPED
    return json.dumps(scrub_typed(value), ensure_ascii=False, separators=(",", ":"))


def _scrub_cookie_values(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: COOKIE if k == "value" else _scrub_cookie_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_cookie_values(v) for v in value]
    return value


def _redact_json_arg(arg: str, cookie: bool = False) -> str:
    try:
        value = json.loads(arg)
    except ValueError:
        return redact_text(arg)
    if cookie:
        value = _scrub_cookie_values(value)
    return json.dumps(redact_json(value), ensure_ascii=False, separators=(",", ":"))


def _redact_generic(args: list[str]) -> list[str]:
    out: list[str] = []
    previous_secret_name = False
    for arg in args:
        if arg in (TYPED, COOKIE) or arg.startswith(("[REDACTED:",)):
            out.append(arg)
            previous_secret_name = False
            continue
        if previous_secret_name:
            out.append(SECRET)
            previous_secret_name = False
            continue
        bare = arg.strip().rstrip(":")
        if _FIELD_NAME.fullmatch(bare) and is_secret_key(bare):
            # `header Authorization "Bearer …"`: the value is the next argument.
            previous_secret_name = True
            out.append(arg)
            continue
        pair = _SECRET_PAIR.match(arg)
        if pair and is_secret_key(pair["name"]) and not pair["value"].startswith("[REDACTED:"):
            redacted = redact_text(arg)
            # redact_text knows Authorization/Cookie headers; other names are redacted whole.
            out.append(redacted if redacted != arg else pair["name"] + pair["sep"] + SECRET)
        elif arg.lstrip().startswith(("{", "[")):
            out.append(_redact_json_arg(arg))
        else:
            out.append(redact_text(arg))
    return out


def _split_command(command: str) -> tuple[str, list[str]]:
    """`"fill @e5 hunter2"` → (`fill`, [`@e5`, `hunter2`]); a plain verb has no extra args."""
    if not any(ch.isspace() for ch in command.strip()):
        return command.strip(), []
    try:
        parts = shlex.split(command)
    except ValueError:  # unbalanced quote: whitespace split still separates the verb
        parts = command.split()
    return parts[0], parts[1:]


def redact_command(command: str, args: list[str]) -> tuple[str, list[str]]:
    """The verb and its redacted arguments (see the module docstring). The command is redacted
    whole before it is split, while a secret's context (`KEY = value`, a PEM block, quotes
    around a typed value) is still there to recognise it."""
    verb, leading = _split_command(redact_text(command))
    all_args = leading + args
    return redact_text(verb), _redact_generic(_redact_typed(verb_key(verb), all_args))


def _cap(text: str, limit: int) -> str:
    """Redacted, then cut: a secret is recognised whole before any of it can be cut off."""
    return truncate(redact_text(text), limit)[0]


def shown(value: object, limit: int = 40) -> str:
    """A sent value quoted in an error message (which goes back out): redacted, then cut."""
    return _cap(repr(value), limit)


def _raw_str(raw: dict[str, Any], name: str) -> str | None:
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"{name!r} must be a string, got {type(value).__name__}")
    return str(value)


def _opt_str(raw: dict[str, Any], name: str, limit: int) -> str | None:
    value = _raw_str(raw, name)
    return None if value is None else _cap(value, limit)


def _arg_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _args(raw: dict[str, Any]) -> list[str]:
    value = raw.get("args")
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"'args' must be a list, got {type(value).__name__}")
    if len(value) > MAX_ARGS:
        raise ValueError(f"'args' has {len(value)} items; at most {MAX_ARGS} are accepted")
    return [_arg_text(v) for v in value]


def _refs(raw: dict[str, Any]) -> list[ActivityRef]:
    value = raw.get("refs")
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"'refs' must be a list, got {type(value).__name__}")
    refs: list[ActivityRef] = []
    for i, item in enumerate(value[:MAX_REFS]):
        if not isinstance(item, dict) or not isinstance(item.get("ref"), str | int):
            raise ValueError(f"refs[{i}] must be an object with a 'ref', got {shown(item, 80)}")
        fields = {k: _cap(str(item.get(k) or ""), REF_MAX_CHARS)
                  for k in ("role", "name", "selector")}  # fmt: skip
        refs.append(ActivityRef(ref=_cap(str(item["ref"]), 100), **fields))
    return refs


def _duration(raw: dict[str, Any]) -> int | None:
    value = raw.get("duration_ms")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"'duration_ms' must be a number >= 0, got {shown(value)}")
    return round(value)


def _ts(raw: dict[str, Any]) -> str:
    value = raw.get("ts")
    if value is None or value == "":
        return now_iso()
    if not isinstance(value, str):
        raise ValueError(f"'ts' must be an ISO 8601 string, got {shown(value)}")
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"'ts' is not an ISO 8601 time: {shown(value)}") from None
    return value


def _tab_id(raw: dict[str, Any]) -> int | str | None:
    value = raw.get("tab_id")
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str):
        return _cap(value, 100)
    raise ValueError(f"'tab_id' must be a number or string, got {shown(value)}")


def workspace_of(raw: dict[str, Any]) -> tuple[str | None, str | None]:
    """(workspace id, directory if the sender gave one) from a workspace dir or id."""
    value = raw.get("workspace")
    if value is None or value == "":
        return None, None
    if not isinstance(value, str):
        raise ValueError(f"'workspace' must be a directory or workspace id, got {shown(value)}")
    ref = resolve_workspace(value)
    return ref.id, ref.directory


def prepare_entry(raw: object) -> tuple[ActivityEntry, str | None]:
    """Validate, normalise and redact one reported entry; returns it and its workspace directory.

    Server-assigned fields (`id`, `seq`, `start_id`, `truncated`, `link`) are ignored if sent,
    and so are unknown fields (newer senders). Raises ValueError naming the offending field.
    """
    if not isinstance(raw, dict):
        raise ValueError(f"an activity entry must be a JSON object, got {type(raw).__name__}")
    kind = raw.get("type", "command_end")
    if kind not in _TYPES:
        known = ", ".join(_TYPES)
        raise ValueError(f"unknown activity type {shown(kind)}; expected one of {known}")
    # The whole command is split before any cut (a typed value must not hide in it).
    command = _raw_str(raw, "command") or ""
    if not command.strip() and kind not in _OBSERVATIONS:
        raise ValueError(f"'command' is required for a {kind} entry")
    verb, args = redact_command(command, _args(raw)) if command.strip() else ("", _args(raw))
    status = raw.get("status")
    if status not in (None, "ok", "error"):
        raise ValueError(f"'status' must be 'ok' or 'error', got {shown(status)}")
    error = _opt_str(raw, "error", ERROR_MAX_CHARS)
    if status is None and kind == "command_end":
        status = "error" if error else "ok"
    result_raw = _raw_str(raw, "result")
    result, cut = (None, False)
    if result_raw is not None:
        result, cut, _ = truncate(redact_text(result_raw), RESULT_MAX_CHARS)
    url = _raw_str(raw, "url")
    ws_id, directory = workspace_of(raw)
    entry = ActivityEntry(
        type=kind,
        request_id=_opt_str(raw, "request_id", ID_MAX_CHARS),
        command=truncate(verb, COMMAND_MAX_CHARS)[0],
        args=[truncate(a, ARG_MAX_CHARS)[0] for a in args],
        url=None if url is None else truncate(redact_url(url), URL_MAX_CHARS)[0],
        tab_id=_tab_id(raw),
        workspace=ws_id,
        source=_opt_str(raw, "source", 50),
        status=status,
        duration_ms=_duration(raw),
        result=result,
        truncated=cut,
        error=error,
        refs=_refs(raw),
        ts=_ts(raw),
        tool_use_id=_opt_str(raw, "tool_use_id", ID_MAX_CHARS),
    )
    return entry, directory
