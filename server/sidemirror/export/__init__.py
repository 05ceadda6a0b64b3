"""`sidemirror export`: a session read from the running server, written as JSONL, Markdown or
one self-contained HTML file, a page of items at a time (the server redacts what it answers)."""
