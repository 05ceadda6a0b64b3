"""Claude Code hooks on the user's side: `sidemirror hook` (the command Claude Code runs on
every hook event; standard library only) and `sidemirror hooks install|uninstall|status` (its
entries in Claude Code's settings file). Nothing here imports the server."""
