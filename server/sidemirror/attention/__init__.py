"""What needs the user's attention: each session's live state (running, waiting with a reason,
idle, ended) combined from Claude Code hooks, the transcript and the process, and the
permission requests held until the user decides."""
