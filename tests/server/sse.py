"""A tiny SSE reader for tests: raw bytes in, exact frames out (no client library in between)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import ClientResponse


@dataclass
class Frame:
    raw: bytes
    fields: list[tuple[str, str]]

    def get(self, name: str) -> str | None:
        for key, value in self.fields:
            if key == name:
                return value
        return None

    @property
    def event(self) -> str | None:
        return self.get("event")

    @property
    def id(self) -> str | None:
        return self.get("id")

    @property
    def data(self) -> Any:
        lines = [v for k, v in self.fields if k == "data"]
        return json.loads("\n".join(lines)) if lines else None


class SSEReader:
    def __init__(self, resp: ClientResponse) -> None:
        self.resp = resp
        self.buf = b""

    async def frame(self) -> Frame:
        while b"\n\n" not in self.buf:
            chunk = await self.resp.content.readany()
            if not chunk:
                raise EOFError("stream ended")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\n\n", 1)
        fields: list[tuple[str, str]] = []
        for line in raw.decode("utf-8").split("\n"):
            key, _, value = line.partition(":")
            fields.append((key, value[1:] if value.startswith(" ") else value))
        return Frame(raw + b"\n\n", fields)

    async def event(self) -> Frame:
        """The next frame that is not a comment (ping) or a bare `retry:`."""
        while True:
            f = await self.frame()
            if f.fields and f.fields[0][0] not in ("", "retry"):
                return f
