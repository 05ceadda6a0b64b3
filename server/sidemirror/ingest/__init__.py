"""Pushed sessions: a run of records through a converter, and the ingest journal that makes
them survive a restart with the same ids."""
