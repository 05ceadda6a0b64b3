"""Agent Client Protocol: `session/update` notifications seen by `sidemirror acp-tap`."""
