"""The floors of the house: bench/eval → checks → bot → hublookup → advisor, with the Bot API
stand-in (standin/) on the ground beside the engine. An import may point down, never up, and
no two modules import each other, directly or round a circle. A function-level
or TYPE_CHECKING import ties two modules as much as a top-level one, so every import in the
source counts."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("advisor", "bot", "checks", "hublookup", "standin")
# The floor of each package: an import may point to the same floor or a lower one.
FLOORS = {"advisor": 0, "standin": 0, "hublookup": 1, "bot": 2, "checks": 3}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def import_graph() -> dict[str, set[str]]:
    """Module -> the project's modules it imports. `from pkg import name` points at the
    module pkg.name when there is one, else at pkg (its __init__)."""
    files = _sources()

    def known(name: str) -> str | None:
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[: len(package) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names
                ]
            for target in targets:
                found = known(target)
                if found is not None and found != name:
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_the_imports_it_must_judge() -> None:
    graph = import_graph()
    assert "advisor.recommend" in graph["bot.answer"]
    assert "advisor.types" in graph["advisor.pitfalls"]  # a top-level `from x import y`
    assert "hublookup.cache" in graph["bot.storage"]
    assert "hublookup.cli" in graph["advisor.__main__"]  # a function-level import counts


def test_circles_are_found_when_they_exist() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_import_circles_between_the_projects_modules() -> None:
    assert circles(import_graph()) == []


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports from a package to one on a higher floor, or between the two ground-floor
    packages (the engine and the stand-in of Telegram know nothing of each other)."""

    def package(module: str) -> str:
        return module.split(".")[0]

    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if package(module) != package(target)
        and FLOORS[package(target)] >= FLOORS[package(module)]
        and not (module == "advisor.__main__" and package(target) == "hublookup")
    )


def test_upward_imports_are_found_when_they_exist() -> None:
    graph = {
        "advisor.fit": {"advisor.memory", "bot.app"},
        "hublookup.cache": {"advisor.fit"},
        "standin.server": {"advisor.fit"},
        "checks.load": {"bot.app", "standin"},
        "bot.app": {"checks.load", "hublookup.cache", "standin"},
        "advisor.__main__": {"hublookup.cli"},
    }
    assert upward_imports(graph) == [
        "advisor.fit -> bot.app",
        "bot.app -> checks.load",
        "standin.server -> advisor.fit",
    ]


def test_nothing_below_the_bot_imports_the_bot() -> None:
    """Nor anything an import up a floor: the engine, hublookup/ and the stand-in never reach
    the bot, the bot never reaches checks/ (the scripts' and the tests' shared code)."""
    assert upward_imports(import_graph()) == []


def test_the_engine_imports_nothing_above_it_but_its_command_line_shell() -> None:
    """advisor/ is pure: only its CLI shell (advisor/__main__.py) may reach hublookup/."""
    upward = sorted(
        f"{module} -> {target}"
        for module, targets in import_graph().items()
        if module.startswith("advisor") and module != "advisor.__main__"
        for target in targets
        if target.startswith("hublookup")
    )
    assert upward == []


def private_reaches(source: str) -> list[str]:
    """Where a module uses a private name (`_name`, not `__dunder__`) that is not its own:
    an attribute of anything but `self` or `cls` (another object's internals, another
    module's `_helper`), or `from module import _name`. A private name may change without
    notice, and reaching one across a module pinned a library's version before (aiosqlite's
    `_execute`) and tied the stores to the repository's workers."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"{node.lineno}: from {node.module} import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and not alias.name.startswith("__")
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_private_reaches_are_found_when_they_exist() -> None:
    source = (
        "from bot.storage import _entry\n"
        "def f(repo):\n"
        "    return repo._writer, self._own, cls._also, repo.__class__, site._server.x\n"
    )
    assert private_reaches(source) == [
        "1: from bot.storage import _entry",
        "3: repo._writer",
        "3: site._server",
    ]


def test_the_bot_reaches_no_private_name_of_another_object_or_module() -> None:
    """bot/ uses other modules and libraries through their public names only (the stores
    beside `bot.storage` read and write through `Repository.query` and `.transaction`)."""
    reaches = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in sorted((ROOT / "bot").rglob("*.py"))
        for where in private_reaches(path.read_text(encoding="utf-8"))
    ]
    assert reaches == []


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def test_tests_and_the_scripts_share_code_only_through_packages() -> None:
    """bench/, eval/ and calibration/ are scripts: the tests import none of them (what both
    need lives in checks/), none of them imports the tests, and checks/ imports neither."""
    scripts = {"bench", "eval", "calibration"}
    script_modules = {p.stem for folder in scripts for p in (ROOT / folder).glob("*.py")}
    crossing = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for name in _imported_names(path):
            if name.split(".")[0] in scripts | script_modules:
                crossing.append(f"{path.name} imports {name}")
        for folder in scripts:
            if f'sys.path.insert(0, str(ROOT / "{folder}"))' in text:
                crossing.append(f"{path.name} puts {folder}/ on the path")
    for folder in sorted(scripts | {"checks"}):
        below = ("tests", "conftest") if folder in scripts else ("tests", "conftest", *scripts)
        for path in sorted((ROOT / folder).glob("*.py")):
            crossing += [
                f"{folder}/{path.name} imports {name}"
                for name in _imported_names(path)
                if name.split(".")[0] in below
            ]
    assert crossing == []


def test_test_helpers_are_imported_under_one_module_name() -> None:
    """As `tests.conftest` (pytest's own name for it: tests/ is a package), never as bare
    `conftest` or `image_stage`, which would load a second copy of the helpers."""
    helpers = {p.stem for p in (ROOT / "tests").glob("*.py") if not p.stem.startswith("test_")}
    bare = [
        f"{path.name} imports {name}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for name in _imported_names(path)
        if name.split(".")[0] in helpers
    ]
    assert bare == []


def test_the_engines_types_are_imported_from_the_module_that_holds_them() -> None:
    """advisor/models/ holds one thing per module and its __init__ re-exports none: a
    `from advisor.models import Workload` fails at import, so none may be written."""
    graph = import_graph()
    assert "advisor.models.workload" in graph["advisor.models.result"]
    assert sorted(m for m, targets in graph.items() if "advisor.models" in targets) == []
