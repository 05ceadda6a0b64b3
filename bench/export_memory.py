"""A big session exported in bounded memory (issue 33: a 1 GB export with peak RSS ≤ 150 MB).

A synthetic transcript of the real fixture's lines, each repetition with ids of its own
(`synth.write_transcript(unique_ids=True)`: the snapshot phase's file repeats its tool ids, and
a whole-session reader then pairs results with calls differently depending on where a read
starts), is served by our server; `sidemirror export` then writes it in each format to a
file. Measured per format: the wall time, the export process's peak RSS as the kernel counted
it (`ru_maxrss` from wait4, not a sample), the server's peak RSS meanwhile (sampled every
20 ms) and the bytes written.

    .bench/venv/bin/python bench/run.py --only export [--export-mb 1024] [--export-formats md]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp
import client
import peers
import synth

# The done-when bound (issue 33) for the export process.
PEAK_RSS_MB_MAX = 150


def transcript_of(data: Path, session: str, mb: int) -> Path:
    """The phase's transcript of `mb` MB, built once and kept under `data`."""
    path = data / f"transcript-{mb}MB-unique-ids.jsonl"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        synth.write_transcript(tmp, session, mb << 20, unique_ids=True)
        tmp.rename(path)
    return path


async def measure(
    transcript: Path, home: Path, session: str, project: str, formats: list[str]
) -> dict[str, Any]:
    """Serve `transcript` from a fresh `home` and export its session once per format."""
    dst = home / ".claude/projects" / project / f"{session}.jsonl"
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(transcript, dst)
    except OSError:
        shutil.copyfile(transcript, dst)
    out: dict[str, Any] = {"transcript_bytes": transcript.stat().st_size, "formats": {}}
    with peers.start_ours(home) as run:
        await peers.wait_http(run.base + "/health", run.proc, 120)
        await _listed(run.base)
        for fmt in formats:
            rss = client.RssSampler(run.proc.pid, 0.02)
            rss.start()
            try:
                result = await asyncio.to_thread(_export, home, session, fmt)
            finally:
                rss.stop_flag.set()
                rss.join()
            result["server_peak_rss_mb"] = round(rss.peak / 2**20, 1)
            out["formats"][fmt] = result
    out["peak_rss_mb_max"] = PEAK_RSS_MB_MAX
    out["within_bound"] = all(
        r.get("peak_rss_mb", PEAK_RSS_MB_MAX + 1) <= PEAK_RSS_MB_MAX
        for r in out["formats"].values()
    )
    return out


async def _listed(base: str) -> None:
    async with aiohttp.ClientSession() as s:
        for _ in range(6000):
            async with s.get(base + "/api/workspaces", headers=peers.AUTH) as r:
                if (await r.json())["workspaces"]:
                    return
            await asyncio.sleep(0.02)
    raise RuntimeError("the transcript was never listed")


def _export(home: Path, session: str, fmt: str) -> dict[str, Any]:
    target = home.parent / f"export.{fmt}"
    argv = [
        str(peers.BENCH / "venv/bin/python"), "-m", "sidemirror", "export", session,
        "--format", fmt, "-o", str(target),
        "--runtime-dir", str(home.parent / "sm-runtime"),
        "--data-dir", str(home.parent / "sm-data"),
    ]  # fmt: skip
    extra = {}
    if os.environ.get(peers.OURS_PYTHONPATH):
        extra["PYTHONPATH"] = os.environ[peers.OURS_PYTHONPATH]
    log = home.parent / f"export-{fmt}.log"
    t0 = time.monotonic()
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            argv, env=peers._env(home, extra), stdout=fh, stderr=subprocess.STDOUT, cwd=str(home)
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - t0
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {peers.tail_log(log)}"}
    written = target.stat().st_size
    target.unlink()
    return {
        "seconds": round(took, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),  # Linux: kilobytes
        "output_bytes": written,
        "mb_per_s": round(written / 2**20 / took, 1),
    }
