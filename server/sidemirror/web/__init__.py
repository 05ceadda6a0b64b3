"""The HTTP side: the security middleware, request bodies, the one SSE response, the shared app
state, and one module per group of routes (the route list itself is in `app.py`)."""
