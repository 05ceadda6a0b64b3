"""Vendored third-party code in the extension is what its README pins: the same bytes, the
version it names, and a licence text for every package it bundles."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

VENDOR = Path(__file__).resolve().parents[2] / "extension" / "lib" / "page" / "vendor"


def test_markdown_it_is_the_pinned_file_with_its_licences() -> None:
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith("| `markdown-it.js`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    version, pinned_sha = cells[2], cells[4].strip("`")
    code = (VENDOR / "markdown-it.js").read_bytes()
    assert hashlib.sha256(code).hexdigest() == pinned_sha
    assert code.startswith(f"/*! markdown-it {version} ".encode())
    licences = (VENDOR / "markdown-it.LICENSES.txt").read_text(encoding="utf-8")
    packages = re.findall(r"^== (\S+) (\S+) ==$", licences, flags=re.M)
    assert ("markdown-it", version) in packages
    assert {name for name, _ in packages} == {
        "markdown-it", "mdurl", "uc.micro", "entities", "linkify-it", "punycode.js"
    }  # fmt: skip
