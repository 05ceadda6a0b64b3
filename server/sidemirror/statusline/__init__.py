"""Claude Code's status line on the user's side: `sidemirror statusline run` (the command Claude
Code runs after each message; standard library only) and `sidemirror statusline
install|uninstall|status` (its `statusLine` setting). Nothing here imports the server."""
