"""Which workspace an MCP caller means: agents know a project by its name or its directory
more often than by the 12-hex-digit id the server gives it, so a tool accepts any of the three.

An id or a directory names one workspace at most; a name may be shared (two checkouts both
called `app`), and then the caller is told the candidates, with the ids that tell them apart,
rather than given one of them at random."""

from __future__ import annotations

from collections.abc import Iterable

from sidemirror.core.store import Store, Workspace, resolve_workspace

# Candidates listed in an "ambiguous name" message: enough to choose, not a wall of text.
MAX_CANDIDATES = 10


class WorkspaceLookupError(LookupError):
    """No workspace, or more than one, answers to what the caller gave; the message says which."""


def find_workspace(store: Store, value: str) -> Workspace:
    """The workspace `value` names: its id, its directory (as the agent records it) or its
    name (the directory's last part; case-insensitively when no exact match)."""
    found = store.workspace(value) or store.workspace(resolve_workspace(value).id)
    if found is not None:  # its id, or its directory (ids are hashes of directories)
        return found
    wanted = value.strip()
    listed = store.workspaces_by_activity()
    for same in (
        [ws for ws in listed if ws.name == wanted],
        [ws for ws in listed if ws.name.casefold() == wanted.casefold()],
    ):
        if len(same) == 1:
            return same[0]
        if len(same) > 1:
            raise WorkspaceLookupError(_ambiguous(value, same))
    raise WorkspaceLookupError(
        f"unknown workspace {value!r} (not an id, directory or name of a known workspace); "
        "call sidemirror_list_workspaces for the known ones"
    )


def _ambiguous(value: str, candidates: Iterable[Workspace]) -> str:
    found = list(candidates)
    lines = [f"{ws.id} ({ws.directory})" for ws in found[:MAX_CANDIDATES]]
    if len(found) > MAX_CANDIDATES:
        lines.append(f"and {len(found) - MAX_CANDIDATES} more")
    return (
        f"workspace name {value!r} is ambiguous: {len(found)} workspaces have it; "
        f"pass one's id or directory instead: {'; '.join(lines)}"
    )
