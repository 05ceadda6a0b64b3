"""Following files, knowing no format: tail reads of append-only JSONL files, file events
(inotify or watchfiles), and the persisted merge order of a session built from several files."""
