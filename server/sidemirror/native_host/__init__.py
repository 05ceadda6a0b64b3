"""Pairing over Chrome native messaging: a channel only the browser can open.

Chrome starts the host named in a host manifest (manifest.py) only for an extension the
manifest allows, and says which one in the host's first argument. The host (host.py) reads the
running server's runtime file and data dir and answers the extension's `pair` message with the
token, the panel credential, the port and the server id; the extension then checks the
server's `/api/identify` proof before it sends anything. Standard library only: Chrome starts a
host for each message.
"""
