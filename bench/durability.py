"""Durability bench: the real bot under a stream of updates and SIGKILLs, /forget under
load; `python bench/durability.py --help`.

The driver lives in checks/durability.py, where the tests import it; this is its command line."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks.durability import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
