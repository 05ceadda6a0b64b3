"""Whether a forwarded host's forwarder is connected, and since when: what the workspace listing
says of a `LABEL:/dir` workspace, so the panel can tell a quiet remote agent from a forwarder
that is gone (its sessions then look idle though the agent may still be working)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from sidemirror.core.clock import iso_from_epoch


@dataclass(slots=True)
class HostLink:
    label: str
    # Forwarders connected under this label now: a reconnect may briefly overlap the old link.
    links: int = 0
    since: float = 0.0  # when it connected, or was last heard from; 0: never

    def attach(self) -> None:
        if self.links == 0:
            self.since = time.time()
        self.links += 1

    def detach(self) -> None:
        self.links = max(0, self.links - 1)
        if self.links == 0:
            self.since = time.time()

    def view(self) -> dict[str, Any]:
        """`since`: when the forwarder connected (`connected`), or when it was last heard from."""
        since = iso_from_epoch(self.since)
        return {"label": self.label, "connected": self.links > 0, "since": since}
