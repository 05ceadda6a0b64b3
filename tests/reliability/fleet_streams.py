"""The fleet soak's clients (test_fleet_soak.py): streams that follow a session for hours, resuming
by their last id when dropped, and streams opened on a whim and dropped, mid-message too.

Every client reads the real server's SSE bytes with aiohttp and counts what a user would notice;
markers `BMK<n>Z` (tests/harness/agent_lines.py) name the lines.
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field

import aiohttp

from tests.harness.auth import AUTH

from .harness import sse_frames

MARK = re.compile(r"BMK(\d{7})Z")
NO_ID_EVENTS = {"hello", "session_status", "ping", "reset", "assistant_delta"}
TIMEOUT = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=None)


@dataclass
class Follower:
    """One session followed for the whole run. It hangs up by itself every `drop_every` (a range of
    seconds; half the time in the middle of a message) and reconnects with `Last-Event-ID`, as a
    browser's EventSource does. It counts each marker it sees in an item, so a line delivered
    twice, never, or after a later one shows."""

    url: str
    first: int  # the session's first marker: lines are first, first + 1, ...
    rng: random.Random
    drop_every: tuple[float, float]
    last_id: str | None = None
    seen: set[int] = field(default_factory=set)
    top: int = -1  # the highest marker seen
    duplicates: int = 0
    out_of_order: int = 0
    drops: int = 0
    mid_message_drops: int = 0
    connects: int = 0
    resets: int = 0
    errors: list[str] = field(default_factory=list)
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    def _item(self, event: str | None, data: str) -> None:
        for n in {int(m) for m in MARK.findall(data)}:
            if event == "snapshot":  # a resume that failed: the reset is what counts
                self.seen.add(n)
            elif n in self.seen:
                self.duplicates += 1
            else:
                self.out_of_order += n < self.top
                self.seen.add(n)
                self.top = max(self.top, n)

    def missing(self, written: int) -> int:
        return sum(1 for n in range(self.first, self.first + written) if n not in self.seen)

    async def run(self, http: aiohttp.ClientSession) -> None:
        while True:
            headers = {**AUTH, **({"Last-Event-ID": self.last_id} if self.last_id else {})}
            try:
                async with http.get(self.url, headers=headers, timeout=TIMEOUT) as resp:
                    if resp.status != 200:
                        self.errors.append(f"HTTP {resp.status}")
                    else:
                        self.connects += 1
                        await self._read(resp, self.rng.uniform(*self.drop_every))
            except (aiohttp.ClientError, OSError) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(0.1)

    async def _read(self, resp: aiohttp.ClientResponse, for_seconds: float) -> None:
        loop = asyncio.get_running_loop()
        until = loop.time() + for_seconds
        buf = b""
        while True:
            try:
                chunk = await asyncio.wait_for(resp.content.readany(), until - loop.time())
            except TimeoutError:
                break
            if not chunk:
                self.errors.append("the server ended the stream")
                return
            buf = self._feed(buf + chunk)
        if self.rng.random() < 0.5:  # half a message read, the rest never
            try:  # the session may be quiet (the run's end): then a ping comes within 15 s
                chunk = await asyncio.wait_for(resp.content.readany(), 30)
            except TimeoutError:
                chunk = b""
            buf = self._feed(buf + chunk[: self.rng.randint(1, max(1, len(chunk) - 1))])
            self.mid_message_drops += bool(buf)
        self.drops += 1  # leaving the block hangs up; the unfinished message is lost

    def _feed(self, data: bytes) -> bytes:
        """Handle the whole messages in `data`; the rest, for the next read."""
        got, rest = sse_frames(data)
        for event, fid, payload in got:
            if event == "reset":
                self.resets += 1
            if fid is None or event in NO_ID_EVENTS:
                continue
            self._item(event, payload)
            self.last_id = fid
            self.ready.set()
        return rest


@dataclass
class Churn:
    """Streams opened every few seconds on a random URL, read a while, and dropped (a third of
    them right after reading some random number of bytes, mostly mid-message)."""

    urls: list[str]
    rng: random.Random
    opened: int = 0
    dropped: int = 0
    mid_message_drops: int = 0
    errors: list[str] = field(default_factory=list)

    async def run(self, http: aiohttp.ClientSession) -> None:
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                await asyncio.sleep(self.rng.uniform(1.0, 4.0))
                task = asyncio.create_task(self._one(http, self.rng.choice(self.urls)))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        finally:
            for task in list(tasks):
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _one(self, http: aiohttp.ClientSession, url: str) -> None:
        try:
            async with http.get(url, headers=AUTH, timeout=TIMEOUT) as resp:
                if resp.status != 200:
                    self.errors.append(f"HTTP {resp.status} {url}")
                    return
                self.opened += 1
                loop = asyncio.get_running_loop()
                until = loop.time() + self.rng.uniform(0.5, 12.0)
                while loop.time() < until:
                    try:
                        if not await asyncio.wait_for(resp.content.readany(), until - loop.time()):
                            self.errors.append(f"the server ended {url}")
                            return
                    except TimeoutError:
                        break
                if self.rng.random() < 1 / 3:
                    await resp.content.read(self.rng.randint(1, 4000))
                    self.mid_message_drops += 1
                resp.close()
                self.dropped += 1
        except (aiohttp.ClientError, OSError) as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")


@dataclass
class Poller:
    """The Sessions view: the workspace and session lists read now and then."""

    paths: list[str]
    rng: random.Random
    polls: int = 0
    errors: list[str] = field(default_factory=list)

    async def run(self, http: aiohttp.ClientSession, base: str) -> None:
        while True:
            await asyncio.sleep(self.rng.uniform(3.0, 12.0))
            path = self.rng.choice(self.paths)
            try:
                async with http.get(base + path, headers=AUTH) as resp:
                    await resp.read()
                    self.polls += 1
                    if resp.status != 200:
                        self.errors.append(f"HTTP {resp.status} {path}")
            except (aiohttp.ClientError, OSError) as exc:
                self.errors.append(f"{type(exc).__name__}: {exc}")
