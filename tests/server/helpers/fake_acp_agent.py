"""A scripted ACP agent for the tap test: answers initialize, session/new and one prompt.

It appends every byte it reads to `<log dir>/agent_in` and every byte it writes to
`<log dir>/agent_out`, so the test can compare both directions byte for byte. Its output is
deliberately irregular JSON (spacing, escapes, a line written in two pieces) that a proxy which
re-encoded messages would change.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

LOG = Path(sys.argv[1])


def write(raw: bytes, split: bool = False) -> None:
    with open(LOG / "agent_out", "ab") as log:
        log.write(raw)
    if split:
        half = len(raw) // 2
        sys.stdout.buffer.write(raw[:half])
        sys.stdout.buffer.flush()
        time.sleep(0.05)
        raw = raw[half:]
    sys.stdout.buffer.write(raw)
    sys.stdout.buffer.flush()


def update(session: str, body: str) -> bytes:
    text = '{"jsonrpc":"2.0", "method":"session/update","params":{"sessionId":"%s","update":%s}}\n'
    return (text % (session, body)).encode()


def main() -> None:
    for raw in sys.stdin.buffer:
        with open(LOG / "agent_in", "ab") as log:
            log.write(raw)
        msg = json.loads(raw)
        rid = msg.get("id")
        if msg.get("method") == "initialize":
            write(b'{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":1}}\n' % rid)
        elif msg.get("method") == "session/new":
            write(
                b'{"jsonrpc":"2.0","id":%d,"result":{"sessionId":"sess-1",'
                b'"models":{"currentModelId":"claude-sonnet-4-5"}}}\n' % rid
            )
        elif msg.get("method") == "session/prompt":
            sid = msg["params"]["sessionId"]
            write(
                update(
                    sid,
                    '{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls -la",'
                    '"kind":"execute","status":"in_progress"}',
                )
            )
            write(
                update(
                    sid,
                    '{"sessionUpdate":"tool_call_update","toolCallId":"t1",'
                    '"status":"completed","rawOutput":"a.ts\\nb.ts"}',
                ),
                split=True,
            )
            for piece in ("Hello ", "w\\u00f6rld", " \\ud83d\\ude00 done."):
                write(
                    update(
                        sid,
                        '{"sessionUpdate":"agent_message_chunk","content":'
                        + f'{{"type":"text","text":"{piece}"}}}}',
                    )
                )
            write(b'{"id": %d,  "jsonrpc": "2.0", "result": {"stopReason": "end_turn"}}\r\n' % rid)


if __name__ == "__main__":
    main()
