"""Browse activity: what the agent did in the browser, as a persisted log with one id sequence,
and the rules that validate and redact a reported entry."""
