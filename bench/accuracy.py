"""`python bench/accuracy.py [--cases FILE] [--json] [--verbose] [--fit-band]`: the accuracy
score against measured VRAM cases. The scorer lives in eval/accuracy.py (with the other
answer checks); this entry point keeps the older command working."""

import runpy
from pathlib import Path

if __name__ == "__main__":
    runpy.run_path(
        str(Path(__file__).resolve().parent.parent / "eval" / "accuracy.py"), run_name="__main__"
    )
