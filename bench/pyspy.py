"""Optional py-spy profiles of the server during a measured window (`run.py --profile DIR`).

`Profile(pid, path, seconds)` runs `py-spy record` (raw collapsed stacks) for a bounded time;
`summarize(path)` prints the hottest functions (self and inclusive) from such a file.
"""

from __future__ import annotations

import collections
import shutil
import subprocess
import sys
from pathlib import Path

PYSPY = Path(sys.executable).parent / "py-spy"


class Profile:
    def __init__(self, pid: int, out: Path | None, seconds: float, rate: int = 250) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.out = out
        exe = str(PYSPY) if PYSPY.exists() else shutil.which("py-spy")
        if out is None or exe is None:
            return
        out.parent.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [
                exe,
                "record",
                "-p",
                str(pid),
                "-d",
                str(max(1, int(seconds))),
                "-r",
                str(rate),
                "-f",
                "raw",
                "-o",
                str(out),
                "--nonblocking",
                "--threads",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def finish(self, timeout: float = 30) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.terminate()


def summarize(path: Path, top: int = 25) -> str:
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        frames = [f for f in stack.split(";") if f]
        total += int(n)
        if frames:
            own[frames[-1]] += int(n)
        for f in set(frames):
            incl[f] += int(n)
    out = [f"{path.name}: {total} samples"]
    out += [f"  self {100 * n / total:5.1f}%  {f}" for f, n in own.most_common(top)]
    out += [
        f"  incl {100 * n / total:5.1f}%  {f}"
        for f, n in incl.most_common(top)
        if not f.startswith(("Thread", "process ", "_run", "run (asyncio"))
    ]
    return "\n".join(out)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(summarize(Path(arg)))
