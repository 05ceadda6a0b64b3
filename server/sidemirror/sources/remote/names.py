"""How a remote host's workspaces are named: `LABEL:/dir`, so two machines' `/home/me/app` stay
two workspaces, and the pickers show which machine each one is on."""

from __future__ import annotations

from sidemirror.core.host_link import HostLink
from sidemirror.core.store import Store, Workspace


def ensure_host_workspace(store: Store, host: str | None, cwd: str, agent: str) -> Workspace:
    """The workspace of `cwd` on `host` (this machine when None)."""
    if host is None:
        return store.ensure_workspace(cwd, agent)
    ws = store.ensure_workspace(f"{host}:{cwd}", agent)
    ws.host = store.host_links.setdefault(host, HostLink(host))
    if not ws.name.startswith(f"{host}:"):
        ws.name = f"{host}:{ws.name}"
    return ws
