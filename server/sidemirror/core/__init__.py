"""The heart of the server, knowing no source and no transport: the event models, the store of
ordered session logs, the hub that tells subscribers, projection (truncation), redaction, prices,
and the views every output answers from. Imports no other package of the server."""
