"""Where the checkout and its real recorded fixtures are, for tests that read or run them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
# Screenshots the e2e tests take for a reviewer to look at (never compared): one folder per run
# of the suite, named by SIDEMIRROR_SHOTS, or under the system's temporary directory.
SHOTS = Path(os.environ.get("SIDEMIRROR_SHOTS") or Path(tempfile.gettempdir()) / "sidemirror-shots")
