"""`python -m sidemirror.native_host`: what the host launcher runs (host.py)."""

import sys

from sidemirror.native_host.host import main

sys.exit(main())
