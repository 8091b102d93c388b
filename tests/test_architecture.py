"""The architecture's rules, checked on the source (docs/dev/ARCHITECTURE.md states them)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import metaeval

SRC = Path(metaeval.__file__).resolve().parent
MAX_LINES = 500

# Each room of the house and the rooms it may import from (besides itself). Data flow runs one way:
# data -> (scoring) -> stats -> analyses -> report, cli on top (DESIGN.md section 1).
FOUNDATION = {"errors", "vocabulary", "defaults", "signature", "serialization", "_version"}
LABELLED = FOUNDATION | {"data", "stats", "_validation"}  # the labelled layer: ScoreSet in, results out
ALLOWED = {
    "errors": set(),
    "vocabulary": {"errors"},
    "defaults": set(),
    "_version": set(),
    "signature": {"_version"},
    "serialization": set(),
    "_validation": FOUNDATION | {"data", "stats"},
    "stats": {"errors", "vocabulary", "defaults"},
    "runtime": FOUNDATION | {"stats"},
    "data": FOUNDATION | {"runtime"},
    "metrics": FOUNDATION | {"data", "runtime"},
    "scoring": FOUNDATION | {"data", "metrics", "runtime"},
    "correlation": LABELLED,
    "human": LABELLED | {"correlation", "runtime"},
    "analyses": LABELLED | {"correlation", "metrics", "runtime", "human"},
    "judges": LABELLED | {"correlation", "metrics", "runtime", "human"},  # beside analyses
    "spans": LABELLED | {"runtime"},
    "mt": LABELLED | {"human"},  # the WMT wing (rater waves from human/); its numerics are stats/mt
    "report": LABELLED | {"correlation", "analyses", "human", "metrics", "runtime", "judges", "spans", "mt"},
    "cli": LABELLED | {"correlation", "analyses", "human", "metrics", "scoring", "report", "runtime", "judges",
                       "spans", "mt"},
}


def _modules():
    return sorted(p for p in SRC.rglob("*.py"))


def _room(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def _imported_rooms(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = path.relative_to(SRC.parent).with_suffix("").parts[:-1]  # ('metaeval', 'stats', ...)
    rooms = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                parts = list(base) + (node.module.split(".") if node.module else [])
                if len(parts) == 1:  # from . import x  (at the package root)
                    rooms.update(alias.name for alias in node.names)
                    continue
            else:
                parts = (node.module or "").split(".")
            if parts[0] == "metaeval" and len(parts) > 1:
                rooms.add(parts[1])
            elif parts == ["metaeval"]:
                rooms.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "metaeval" and len(parts) > 1:
                    rooms.add(parts[1])
    return rooms


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_module_is_at_most_500_lines(path):
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", [p for p in _modules() if _room(p) in ALLOWED], ids=lambda p: str(p.relative_to(SRC)))
def test_imports_only_run_downward(path):
    room = _room(path)
    upward = _imported_rooms(path) - ALLOWED[room] - {room}
    assert not upward, f"{path.relative_to(SRC)} ({room}) imports {sorted(upward)}"


def test_every_room_is_known():
    rooms = {_room(p) for p in _modules()} - {"__init__", "__main__"}
    assert rooms <= set(ALLOWED), sorted(rooms - set(ALLOWED))


# The one exception: the set-up of a worker process metaeval started itself (its own environment).
WORKER_SETUP = "runtime/workers.py"


def test_library_never_writes_the_callers_environment():
    offenders = []
    for path in _modules():
        if str(path.relative_to(SRC)) == WORKER_SETUP:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            target = None
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                target = next((t for t in targets if isinstance(t, ast.Subscript)), None)
                target = target.value if target is not None else None
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "setdefault", "pop", "update", "clear", "__setitem__", "__delitem__", "popitem"
            ):
                target = node.func.value
            if target is not None and ast.unparse(target) == "os.environ":
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not offenders


def test_public_names_are_sorted_and_resolve():
    assert list(metaeval.__all__) == sorted(metaeval.__all__)
    for name in metaeval.__all__:
        assert getattr(metaeval, name) is not None


def _fresh_modules(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize("heavy", ["numpy", "pandas", "scipy", "matplotlib"])
def test_import_metaeval_loads_no_heavy_library(heavy):
    assert heavy not in _fresh_modules("import metaeval")


@pytest.mark.parametrize("heavy", ["numpy", "pandas", "scipy", "matplotlib"])
def test_cli_help_loads_no_heavy_library(heavy):
    code = ("import sys; sys.argv = ['metaeval', '--help']\nfrom metaeval.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert heavy not in _fresh_modules(code)


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The metaeval modules ``path`` imports anywhere (module level, functions, ``TYPE_CHECKING`` blocks)."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            for alias in node.names:
                target = f"{module}.{alias.name}"
                out.add(target if target in modules else module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return (out & modules) - {name}


def test_no_import_circle():
    """No module reaches itself through imports, counting the imports inside functions too."""
    paths = {_module_name(p): p for p in _modules()}
    graph = {name: _imported_modules(path, set(paths)) for name, path in paths.items()}
    circles = []
    for start in sorted(graph):
        seen, stack = set(), [(start, (start,))]
        while stack:
            node, trail = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    circles.append(" -> ".join(trail + (start,)))
                elif nxt not in seen and nxt > start:  # each circle once, from its smallest module
                    seen.add(nxt)
                    stack.append((nxt, trail + (nxt,)))
    assert not circles, circles
