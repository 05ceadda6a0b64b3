"""Agent files of other machines, mirrored byte for byte under the data dir and read with the
same sources as local files (`sidemirror forward` sends them; `web/forward.py` receives them)."""
