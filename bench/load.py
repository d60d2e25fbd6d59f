"""Load bench: the real bot against the Bot API stand-in, driven by simulated users;
`python bench/load.py --help`.

The driver lives in checks/load.py, where the tests import it; this is its command line."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks.load import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
