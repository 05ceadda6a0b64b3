"""Claude Code: transcripts under `~/.claude/projects` (with sub-agent files, read from a
sync point near the end when huge), `claude -p --output-format stream-json`, and the demo
session."""
