"""The JSONL export: the item stream as docs/protocol.md describes it, one item a line, oldest
first, each whole (as `GET …/items/{id}` answers it)."""

from __future__ import annotations

import json
from typing import TextIO

from sidemirror.export.walker import Header, Shown


class JsonlWriter:
    def __init__(self, out: TextIO, max_chars: int | None) -> None:
        self.out = out  # `max_chars` does not apply: this is the data, not a reading of it

    def header(self, header: Header) -> None:
        pass  # the stream is items only; the header is the session's, asked of the server

    def item(self, shown: Shown) -> None:
        self.out.write(json.dumps(shown.item, ensure_ascii=False, separators=(",", ":")) + "\n")

    def close(self) -> None:
        pass
