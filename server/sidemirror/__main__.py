"""`python -m sidemirror` works the same as the `sidemirror` command."""

import sys

from sidemirror.entry import main

sys.exit(main())
