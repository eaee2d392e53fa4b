"""Issue 11: the package keeps the shape its README draws.

- The pure core (bytes → screen → rules → combined state) reads no tmux and no processes: it
  imports, even indirectly, none of tmux, libtmux, psutil, subprocess, nor our adapters.
- Short modules with one job: none over 400 lines, no class over 250. The modules still over
  are listed with their size, to be split; they may not grow, and a split one leaves the list.
"""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tmux_agentstate"
CORE = ["vtstream", "cells", "screen", "manifest", "catalog", "combine"]
FORBIDDEN = {"libtmux", "psutil", "subprocess", "socket", "tmux", "procs", "runtime", "sidecar"}
MAX_MODULE, MAX_CLASS = 400, 250
# still to be split (issue 11): path → its lines when this list was made
OVERSIZE: dict[str, int] = {}


def imported(path: Path) -> set[str]:
    """Top names a module imports: `pyte` for `import pyte.screens`, `tmux` for `from .tmux
    import X` (our own modules by their name)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: ours
                names |= ({node.module.split(".")[0]} if node.module
                          else {a.name for a in node.names})
            else:
                names.add(node.module.split(".")[0])
    return names


def test_pure_core_imports_no_tmux_or_processes():
    seen, todo = set(), list(CORE)
    while todo:  # follow the core's imports of our own modules: they are core too
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        module = PACKAGE / f"{name}.py"
        files = [module] if module.exists() else sorted((PACKAGE / name).glob("*.py"))
        assert files, name
        for path in files:  # a package: each of its modules
            names = imported(path) - {p.stem for p in files}
            assert not names & FORBIDDEN, f"{path.name} imports {sorted(names & FORBIDDEN)}"
            todo += [n for n in names if (PACKAGE / f"{n}.py").exists() or (PACKAGE / n).is_dir()]
    assert set(CORE) <= seen


def test_no_module_over_400_lines_no_class_over_250():
    too_long, too_big = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        lines = len(path.read_text().splitlines())
        limit = OVERSIZE.get(rel, MAX_MODULE)
        if lines > limit:
            too_long.append(f"{rel}: {lines} lines (at most {limit})")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and rel not in OVERSIZE:
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS:
                    too_big.append(f"{rel}: class {node.name}, {size} lines")
    assert not too_long and not too_big, too_long + too_big
    for rel in OVERSIZE:  # split below the bound: off the list
        assert len((PACKAGE / rel).read_text().splitlines()) > MAX_MODULE, f"{rel} may leave OVERSIZE"
