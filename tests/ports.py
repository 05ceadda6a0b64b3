"""Free loopback ports, for the servers, browsers and fakes a test starts itself."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port the kernel has just handed out and let go: free now, and from the
    ephemeral range, so not soon handed out again. Nothing listens there until the test starts
    something on it, so it is also a port whose connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
