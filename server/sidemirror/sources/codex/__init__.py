"""Codex: rollout files under `~/.codex/sessions` and `codex exec --json` output."""
