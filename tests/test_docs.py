"""The documents a newcomer reads: README.md is a user's document (short, the quick start
first), no line anywhere in the repository tells how the work on it was organised, and every
test or file the documents name as the evidence for a claim exists."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
# The project's own text: source, data, templates, documents (not the virtual environment,
# not what a run leaves behind).
TEXT_SUFFIXES = {".py", ".md", ".toml", ".j2", ".jinja", ".json", ".txt", ".sql", ".yaml"}
FOLDERS = ("advisor", "bot", "hublookup", "standin", "checks", "bench", "eval", "calibration")
FOLDERS += ("tests", "docs", "templates", "migrations", "deploy", "tools", ".ci")

# Words of a work diary: the tracker's numbers, sittings, rounds and who did what.
DIARY = re.compile(
    r"\b(?:[Ii]ssues? \d+|[Rr]ound \d+|(?:this|that|one|same|earlier|next) session"
    r"|sessions? \d+|[Hh]elpers?|[Aa]gents?|we tried|the lead)\b"
)
# A citation of another project's tracker stays: "vllm-project/vllm issue 16394".
UPSTREAM = re.compile(r"[\w.-]+/[\w.-]+\s+[Ii]ssues?\s+#?\s*\d+")

README_MAX_LINES = 300
QUICK_START_WITHIN = 40


def diary_lines(text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        cleaned = UPSTREAM.sub("", line)
        found += [f"{number}: {m.group(0)}" for m in DIARY.finditer(cleaned)]
    return found


def test_diary_lines_are_found_when_they_exist() -> None:
    text = (
        "Hub lookups (issue 15): the cache; SAM 2 peaks (issue #118)\n"
        "vllm-project/vllm issue 16394 (MI210 FP8)\n"
        "read in the same session; round 3 figures\n"
        "Kaggle: 12 hours per session\n"
    )
    assert diary_lines(text) == ["1: issue 15", "3: same session", "3: round 3"]


def test_the_readme_is_a_users_document_with_the_quick_start_first() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    headings = [i for i, line in enumerate(lines, 1) if line.startswith("## Quick start")]
    assert headings and headings[0] <= QUICK_START_WITHIN


def test_the_documents_keep_no_work_diary() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in DOCS
        for where in diary_lines(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def _project_files() -> list[Path]:
    files = [p for p in ROOT.glob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES]
    for folder in FOLDERS:
        files += [
            p
            for p in sorted((ROOT / folder).rglob("*"))
            if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts
        ]
    return files


# "issue 15", also broken over two lines of a comment ("(issue\n# 16)"); a sitting of work
TRACKER = re.compile(r"\b(?:[Ii]ssues?(?: |\s*\n\s*#?\s*)\d+|(?:this|that|same|earlier) session)\b")


def tracker_numbers(text: str) -> list[str]:
    text = UPSTREAM.sub("", text)
    return [
        f"{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}" for m in TRACKER.finditer(text)
    ]


def test_tracker_numbers_are_found_when_they_exist() -> None:
    text = (
        "first (issue\n"
        "# 16), recalled, not re-read this session\n"
        "Wan-Video/Wan2.1 issue\n# #161; SAM 2 peaks (issue #118); vllm-project/vllm issue 16394\n"
    )
    assert tracker_numbers(text) == ["1: 'issue\\n# 16'", "2: 'this session'"]


def test_no_file_names_the_tracker_that_organised_the_work() -> None:
    """Code, data and tests say why, not which ticket: no "issue 15" outside a citation of
    another project's tracker, no "this session" in a catalog's sources."""
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in _project_files()
        if path != Path(__file__).resolve()
        for where in tracker_numbers(path.read_text(encoding="utf-8"))
    ]
    assert found == []


# `tests/test_x.py::name`, a file such as `bench/load.py`, or `::name` after a named test file
REFERENCE = re.compile(
    r"(?<![\w./])((?:tests|bench|eval|checks|calibration|standin|bot|advisor|hublookup|tools)"
    r"/[\w/.-]+\.(?:py|md|toml|json|j2|txt))(?:::(\w+))?|(?<![\w])::(\w+)"
)


@cache
def _defined(path: Path) -> frozenset[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return frozenset(node.name for node in ast.walk(tree) if isinstance(node, kinds))


def missing_references(text: str) -> list[str]:
    """The files and tests `text` names that do not exist. A bare `::name` belongs to the
    test file named last before it."""
    missing: list[str] = []
    last_tests: Path | None = None
    for number, line in enumerate(text.splitlines(), 1):
        for match in REFERENCE.finditer(line):
            name, test, after = match.groups()
            if name is not None:
                path = ROOT / name
                if not path.exists():
                    missing.append(f"{number}: {name}")
                    continue
                if name.startswith("tests/") and path.suffix == ".py":
                    last_tests = path
                if test is not None and path.suffix == ".py" and test not in _defined(path):
                    missing.append(f"{number}: {name}::{test}")
            elif last_tests is not None and after not in _defined(last_tests):
                missing.append(f"{number}: {last_tests.relative_to(ROOT)}::{after}")
    return missing


def test_missing_references_are_found_when_they_exist() -> None:
    text = (
        "(`tests/test_docs.py::test_the_documents_keep_no_work_diary`, `::no_such_test`)\n"
        "`bench/no_such_bench.py`, `../shared/eval/vram_cases.json`, `advisor/fit.py`\n"
        "`tests/test_structure.py` then `::test_circles_are_found_when_they_exist`\n"
    )
    assert missing_references(text) == [
        "1: tests/test_docs.py::no_such_test",
        "2: bench/no_such_bench.py",
    ]


def test_every_test_and_file_the_documents_name_exists() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in DOCS
        for where in missing_references(path.read_text(encoding="utf-8"))
    ]
    assert found == []
