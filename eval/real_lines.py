"""Count how the parser reads a table of real lines: read right, asked back (a line that
should have been read but came back as a question), wrong (read as something else, or
guessed where it should have asked). Prints one row per table and, with --show, each miss.
With no table named, every real-lines table (tests/data/parse_lines_real*.toml).

    python eval/real_lines.py
    python -m bench.real_lines tests/data/parse_lines_real4.toml --show
"""

import argparse
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from advisor.parse import parse_query  # noqa: E402
from checks.real_lines import check_real_line  # noqa: E402


def classify(row: dict) -> str:
    """'right', 'asked' (not read, though it should be) or 'wrong'."""
    try:
        check_real_line(row)
        return "right"
    except AssertionError:
        p = parse_query(row["t"])
        return "asked" if (not p.ok and not row.get("expect")) else "wrong"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tables", nargs="*", type=Path)
    ap.add_argument("--show", action="store_true", help="print each line not read right")
    args = ap.parse_args()
    tables = args.tables or sorted((ROOT / "tests" / "data").glob("parse_lines_real*.toml"))
    for path in tables:
        rows = tomllib.loads(path.read_text())["line"]
        counts = {"right": 0, "asked": 0, "wrong": 0}
        misses = []
        for row in rows:
            kind = classify(row)
            counts[kind] += 1
            if kind != "right":
                misses.append((kind, row))
        print(
            f"{path.name}: {len(rows)} lines, read right {counts['right']}, "
            f"asked back {counts['asked']}, wrong {counts['wrong']}"
        )
        if args.show:
            for kind, row in misses:
                p = parse_query(row["t"])
                got = (
                    p.error.code + ": " + p.error.detail
                    if p.error
                    else (
                        p.workload.model,
                        p.workload.params_b,
                        p.workload.weights_format,
                        p.workload.mode.value,
                        p.workload.runtime,
                        p.gpu_id,
                        p.gpu_count,
                        p.vram_gib,
                    )
                )
                print(f"  [{kind}] {row['t'][:90]}\n      got {got}")


if __name__ == "__main__":
    main()
