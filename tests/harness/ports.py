"""Loopback ports for the servers, browsers and fakes a test starts itself.

Three kinds, because they meet different neighbours: `free_port` (ephemeral, for anything no
extension looks for), `quiet_port` (for a server the extension is pinned to, restartable on the
same port) and `range_port` (inside the extension's probe range, for tests of discovery).
"""

from __future__ import annotations

import random
import socket

from sidemirror.listen_socket import PORT_RANGE

# Below the kernel's ephemeral ports (32768-60999: outgoing connections and port 0 take those).
QUIET_PORTS = range(20000, 32768)

_parked: socket.socket | None = None


# The xdist group of every test that binds or probes 47470-47479 (the e2e suite, the server's
# default port): one worker runs them in turn, so none sees another's server on the range.
PORT_RANGE_GROUP = "port_range"


def free_port() -> int:
    """A loopback port the kernel has just handed out and let go: free now, and from the
    ephemeral range, so not soon handed out again. Nothing listens there until the test starts
    something on it, so it is also a port whose connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # Bind like the server does (SO_REUSEADDR): TIME_WAIT leftovers don't block a port.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def quiet_port(avoid: set[int] | None = None) -> int:
    """A free port no one else picks: not in the probe range, so no discovery (ours, or that of
    another checkout's tests running at the same time) looks there, and a server the extension
    is pinned to meets no one else. Chosen at random, so that a server a test stops for a moment
    finds its port free again when it restarts: ports taken in order (these once were, lowest
    first, by every checkout's tests) made the port of a stopped server the very next one
    another test took, and the restart failed with "address already in use"."""
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.choice(QUIET_PORTS)
        if port not in (avoid or set()) and port_free(port):
            return port
    raise RuntimeError(f"no free port found in {QUIET_PORTS.start}-{QUIET_PORTS.stop - 1}")


def range_port(prefer: list[int] | None = None, avoid: set[int] | None = None) -> int:
    """A free port in the extension's probe range, trying `prefer` first, then from the top,
    never one of `avoid`."""
    for port in [*(prefer or []), *reversed(PORT_RANGE)]:
        if port not in (avoid or set()) and port_free(port):
            return port
    raise RuntimeError(f"no free port in {PORT_RANGE.start}-{PORT_RANGE.stop - 1}")


def parked_port() -> int:
    """A loopback port bound for the whole run but never listening: connecting is refused, so no
    server of anyone's can answer there."""
    global _parked
    if _parked is None:
        _parked = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        _parked.bind(("127.0.0.1", 0))
    port: int = _parked.getsockname()[1]
    return port


def free_range(size: int) -> range:
    """`size` consecutive free quiet ports, standing in for the probe range (which belongs to
    the user's own server, never to a test)."""
    for _ in range(200):
        start = random.randrange(QUIET_PORTS.start, QUIET_PORTS.stop - size)
        ports = range(start, start + size)
        holders = []
        try:
            for port in ports:
                s = socket.socket()
                holders.append(s)
                s.bind(("127.0.0.1", port))
            return ports
        except OSError:
            continue
        finally:
            for s in holders:
                s.close()
    raise AssertionError("no free port range")
