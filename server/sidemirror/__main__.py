"""`python -m sidemirror` works the same as the `sidemirror` command."""

import sys

from sidemirror.cli import main

sys.exit(main())
