"""`python eval/accuracy.py [--cases FILE] [--json] [--verbose] [--fit-band]` (also
`python bench/accuracy.py`, the command the issues name): the engine scored against measured
VRAM cases. The scorer lives in checks/accuracy.py, where the tests import it."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from checks.accuracy import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
