"""The HTML export: one self-contained file that reads offline. Inline CSS, no script, nothing
loaded from the network; every text from the session is escaped (`html.escape`), and only the
http(s) links written in it become links, opened with `rel="noopener noreferrer"`. Tool calls
and thinking fold in `<details>`; an edit's diff shows its lines as +/-."""

from __future__ import annotations

import re
from html import escape
from typing import Any

from sidemirror.export.text import (
    ReadableWriter,
    attachments_line,
    diff_text,
    totals,
    turn_line,
    when,
)
from sidemirror.export.walker import Header, Shown

_LINK = re.compile(r"https?://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)\]}]")

STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#1f2328}
header{border-bottom:1px solid #d0d7de;margin-bottom:1em}
.item{margin:.6em 0}.sub{border-left:3px solid #d0d7de;padding-left:.8em}
.user{background:#f6f8fa;border-radius:6px;padding:.5em .8em}
.text{white-space:pre-wrap;overflow-wrap:anywhere}
.who{font-weight:600;font-size:.85em;color:#59636e}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
.add{color:#116329;background:#dafbe1;display:block}.del{color:#82071e;background:#ffebe9;display:block}
.turn{color:#59636e;font-size:.85em;border-bottom:1px dashed #d0d7de;padding-bottom:.4em}
.abandoned{opacity:.6;border:1px dashed #d0d7de;padding:.4em}
.error{color:#82071e}summary{cursor:pointer}
"""


def text_html(text: str) -> str:
    """`text` escaped, its http(s) URLs as links that take nothing of this page along."""
    out, at = [], 0
    for m in _LINK.finditer(text):
        url = m.group()
        out.append(escape(text[at : m.start()]))
        out.append(f'<a href="{escape(url)}" rel="noopener noreferrer">{escape(url)}</a>')
        at = m.end()
    out.append(escape(text[at:]))
    return "".join(out)


def diff_html(diff: dict[str, Any]) -> str:
    rows = []
    for line in diff_text(diff).split("\n"):
        css = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        if line.startswith(("+++", "---")):
            css = ""
        rows.append(f'<span class="{css}">{escape(line)}</span>' if css else escape(line))
    return "<pre>" + "\n".join(rows) + "</pre>"


class HtmlWriter(ReadableWriter):
    OPEN = '<details class="abandoned"><summary>Abandoned branch (the user rewound past it)'
    OPEN += "</summary>\n"
    CLOSE = "</details>\n"

    def header(self, h: Header) -> None:
        self.out.write(
            '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{escape(h.title)}</title><style>{STYLE}</style></head><body>\n"
            f"<header><h1>{escape(h.title)}</h1><p>Workspace {escape(h.workspace)} "
            f"(<code>{escape(h.directory)}</code>) · agent {escape(h.agent)} · session "
            f"<code>{escape(h.session_id)}</code><br>Started {escape(when(h.started_at))}; "
            f"last activity {escape(when(h.last_activity))}<br>{escape(totals(h))}</p>"
            "</header>\n<main>\n"
        )

    def _text(self, item: dict[str, Any], field: str) -> str:
        return text_html(self.text(item, field))

    def _body(self, item: dict[str, Any]) -> str:
        kind = item.get("type")
        if kind in ("user", "assistant"):
            who = "Assistant" if kind == "assistant" else "Prompt"
            if item.get("task_prompt_tool"):
                who = "Task prompt"
            return (
                f'<div class="{kind}"><div class="who">{who} · {escape(when(item.get("ts")))}'
                f'</div><div class="text">{text_html(item.get("content") or "")}</div></div>'
            )
        if kind == "thinking":
            return (
                "<details><summary>Thinking</summary>"
                f'<div class="text">{self._text(item, "content")}</div></details>'
            )
        if kind == "tool_use":
            diffs = item.get("diffs") or ([item["diff"]] if item.get("diff") else [])
            return (
                f"<details><summary>Tool: {escape(str(item.get('name')))} — "
                f"{escape((item.get('input') or '')[:120])}</summary>"
                f"<pre>{self._text(item, 'input')}</pre>"
                + "".join(diff_html(d) for d in diffs)
                + "</details>"
            )
        if kind == "tool_result":
            state = " (error)" if item.get("is_error") else ""
            denial = f" refused: {escape(item['denial'])}" if item.get("denial") else ""
            return (
                f"<details><summary>Result of {escape(str(item.get('name')))}{state}{denial}"
                f"</summary><pre>{self._text(item, 'output')}</pre></details>"
            )
        if kind == "turn_complete":
            return f'<div class="turn">{escape(turn_line(item))}</div>'
        if kind == "plan":
            entries = "".join(
                f"<li>{escape(str(e.get('status')))}: {text_html(str(e.get('content')))}</li>"
                for e in item.get("entries") or []
            )
            return f'<div><div class="who">Plan</div><ul>{entries}</ul></div>'
        if kind == "error":
            return f'<div class="error text">Error: {text_html(item.get("message") or "")}</div>'
        subtype = escape(str(item.get("subtype", kind)))
        return f'<div class="text"><i>{subtype}:</i> {self._text(item, "content")}</div>'

    def block(self, shown: Shown) -> str:
        css = "item sub" if shown.depth else "item"
        indent = f' style="margin-left:{1.2 * shown.depth:g}em"' if shown.depth else ""
        body = self._body(shown.item)
        if carried := attachments_line(shown.item):
            body += f'<div class="who">{escape(carried)}</div>'
        return f'<div class="{css}"{indent}>{body}</div>\n'

    def close(self) -> None:
        super().close()
        self.out.write("</main>\n</body></html>\n")
