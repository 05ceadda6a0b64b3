""" "Always allow": the permission rules the agent itself suggests with a request.

Claude Code sends `permission_suggestions` with a PermissionRequest (hooks reference,
"PermissionRequest input"): permission updates such as `{"type": "addRules", "rules":
[{"toolName": "Bash", "ruleContent": "npm test"}], "behavior": "allow", "destination":
"localSettings"}`, the same ones its own dialog offers as "don't ask again". Codex (newer
releases) sends the same field, its rules `{"type": "prefixRule", "command": [...]}`. Either
agent applies one when the hook's decision names it under `updatedPermissions`; Codex refuses a
rule it did not offer, so a rule is always one of the agent's own, sent back unchanged, and the
user picks it by its index. Nothing here invents or edits a rule.

The card shows each rule as a sentence (`describe`), redacted like the rest of the listing,
before the user applies it.
"""

from __future__ import annotations

import json
from typing import Any

from sidemirror.core.redact import redact_text

MAX_SUGGESTIONS = 8
SUGGESTION_CHARS = 4096  # one rule as JSON: a rule is a tool and a pattern, not a file
_WHERE = {
    "session": "for this session",
    "localSettings": "in this project's local settings",
    "projectSettings": "in this project's settings",
    "userSettings": "in your user settings",
    "cliArg": "for this run",
}


def suggestions_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent's suggested updates, as sent; those that are not a typed object, or are too
    large to show, are left out (they are not offered)."""
    offered = payload.get("permission_suggestions")
    if not isinstance(offered, list):
        return []
    kept: list[dict[str, Any]] = []
    for item in offered[:MAX_SUGGESTIONS]:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        if len(json.dumps(item, ensure_ascii=False)) > SUGGESTION_CHARS:
            continue
        kept.append(item)
    return kept


def _rule(rule: Any) -> str:
    if not isinstance(rule, dict):
        return json.dumps(rule, ensure_ascii=False)
    if rule.get("type") == "prefixRule" and isinstance(rule.get("command"), list):
        words = " ".join(str(word) for word in rule["command"])
        return f'commands starting with "{words}"'
    tool = rule.get("toolName")
    content = rule.get("ruleContent")
    if isinstance(tool, str):
        return f"{tool}({content})" if isinstance(content, str) and content else tool
    return json.dumps(rule, ensure_ascii=False)


def describe(suggestion: dict[str, Any]) -> str:
    """What applying the update does, in one sentence."""
    kind = suggestion.get("type")
    behavior = suggestion.get("behavior")
    where = _WHERE.get(str(suggestion.get("destination")), "")
    if kind in ("addRules", "replaceRules") and isinstance(suggestion.get("rules"), list):
        verb = {"allow": "Always allow", "deny": "Always deny", "ask": "Always ask for"}.get(
            str(behavior), f"Set {behavior} for"
        )
        text = f"{verb} " + ", ".join(_rule(r) for r in suggestion["rules"])
    elif kind == "setMode":
        text = f"Switch to permission mode {suggestion.get('mode')}"
    elif kind == "addDirectories" and isinstance(suggestion.get("directories"), list):
        text = "Allow access to " + ", ".join(str(d) for d in suggestion["directories"])
    else:
        text = json.dumps(suggestion, ensure_ascii=False)
    return redact_text(f"{text} {where}".strip())


def card_rules(suggestions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the card lists: each rule's index (what the decision names) and its sentence."""
    return [{"index": i, "text": describe(s)} for i, s in enumerate(suggestions)]
