"""The Markdown export: plain text that reads as is and renders on a code host. Prompts and
replies as they were written (replies are Markdown already), thinking and abandoned branches
in `<details>`, tool calls and results in fences, a sub-agent's items quoted under its Task
(one `>` per level), a footer after each turn."""

from __future__ import annotations

import re
from typing import Any

from sidemirror.export import text as readable
from sidemirror.export.walker import Header, Shown

_TICKS = re.compile(r"`{3,}")


def fenced(text: str, info: str = "text") -> str:
    """A code fence longer than any run of backticks in `text`, so nothing in it closes it."""
    longest = max((len(m.group()) for m in _TICKS.finditer(text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


class MarkdownWriter(readable.ReadableWriter):
    OPEN = "<details><summary>Abandoned branch (the user rewound past it)</summary>\n\n"
    CLOSE = "</details>\n\n"
    depth = 0  # the previous item's: a sub-agent's first item is labelled

    def header(self, h: Header) -> None:
        self.out.write(
            f"# {h.title}\n\n"
            f"- Workspace: {h.workspace} (`{h.directory}`)\n"
            f"- Agent: {h.agent}\n- Session: `{h.session_id}`\n"
            f"- Started: {readable.when(h.started_at)}; "
            f"last activity: {readable.when(h.last_activity)}\n"
            f"- Totals: {readable.totals(h)}\n\n"
        )

    def _body(self, item: dict[str, Any]) -> str:
        kind = item.get("type")
        if kind == "user":
            who = "Task prompt" if item.get("task_prompt_tool") else "Prompt"
            queued = " (sent while the agent worked)" if item.get("queued") else ""
            said = item.get("content", "")
            return f"### {who}{queued} · {readable.when(item.get('ts'))}\n\n{said}"
        if kind == "assistant":
            return f"**Assistant**\n\n{item.get('content', '')}"
        if kind == "thinking":
            body = self.text(item, "content")
            return f"<details><summary>Thinking</summary>\n\n{fenced(body)}\n\n</details>"
        if kind == "tool_use":
            parts = [
                f"**Tool: {item.get('name')}** ({item.get('kind')})",
                fenced(self.text(item, "input")),
            ]
            for diff in item.get("diffs") or ([item["diff"]] if item.get("diff") else []):
                parts.append(fenced(readable.diff_text(diff), "diff"))
            return "\n\n".join(parts)
        if kind == "tool_result":
            state = " (error)" if item.get("is_error") else ""
            denial = f"\n\nRefused: {item['denial']}" if item.get("denial") else ""
            label = f"Result of {item.get('name')}{state}{denial}"
            return f"{label}\n\n{fenced(self.text(item, 'output'))}"
        if kind == "turn_complete":
            return f"*{readable.turn_line(item)}*\n\n---"
        if kind == "plan":
            entries = item.get("entries") or []
            return "**Plan**\n\n" + "\n".join(
                f"- [{'x' if e.get('status') == 'completed' else ' '}] {e.get('content')}"
                for e in entries
            )
        if kind == "error":
            return f"**Error:** {item.get('message', '')}"
        return f"*{item.get('subtype', kind)}:* {self.text(item, 'content')}"

    def block(self, shown: Shown) -> str:
        body = self._body(shown.item)
        if carried := readable.attachments_line(shown.item):
            body += f"\n\n*{carried}*"
        if shown.depth > self.depth:  # a sub-agent starts (or goes on after its parent spoke)
            body = "*Sub-agent*\n\n" + body
        self.depth = shown.depth
        if shown.depth:  # a sub-agent's item: quoted under its Task, one `>` per level
            quote = "> " * shown.depth
            body = "\n".join((quote + line).rstrip() for line in body.split("\n"))
        return body + "\n\n"
