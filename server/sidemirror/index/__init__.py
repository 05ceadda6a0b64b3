"""The embedded index under the data dir: one SQLite file for every persisted lookup.

`database.py` opens it (and rebuilds it when it is missing or corrupt); each kind of index
keeps its own tables in its own module, so the per-file metadata and the full-text search
share one store instead of two.
"""
