"""Issue 11: the package keeps the shape docs/how-it-works.md (Layout) draws.

- The pure core (`core/`: bytes → screen → rules → combined state) reads no tmux and no
  processes: its modules import only each other and the standard library's non-process parts
  (plus `regex`), none of tmux, libtmux, psutil, subprocess, socket, nor any of our modules
  outside `core/`.
- Each part of the flow has its folder: core, the sidecar and its intakes, the two adapters.
- Short modules with one job: none over 400 lines, no class over 250. A module still over
  would be listed with its size, to be split; it may not grow, and a split one leaves the list.
"""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tmux_agentstate"
CORE = PACKAGE / "core"
FORBIDDEN = {"libtmux", "psutil", "subprocess", "socket", "multiprocessing", "tmux_agentstate"}
MAX_MODULE, MAX_CLASS = 400, 250
# still to be split: path → its lines when it was listed (none left)
OVERSIZE: dict[str, int] = {}


def imports(path: Path) -> tuple[set[str], list[Path]]:
    """What a module imports: the top names of its absolute imports, and the files its
    relative imports resolve to (a module, or a package's `__init__.py`)."""
    absolute, relative = set(), []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            absolute |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            absolute.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = path.parent
            for _ in range(node.level - 1):
                base = base.parent
            targets = [node.module] if node.module else [a.name for a in node.names]
            for target in targets:
                where = base.joinpath(*target.split("."))
                relative.append(where / "__init__.py" if where.is_dir() else where.with_suffix(".py"))
    return absolute, relative


def test_pure_core_imports_no_tmux_or_processes():
    modules = sorted(CORE.rglob("*.py"))
    names = {m.relative_to(CORE).as_posix() for m in modules}
    assert {"vtstream.py", "screen.py", "manifest.py", "catalog.py", "combine.py",
            "cells/grid.py"} <= names
    for module in modules:
        absolute, relative = imports(module)
        assert not absolute & FORBIDDEN, f"{module.name} imports {sorted(absolute & FORBIDDEN)}"
        outside = [t for t in relative if CORE not in t.parents]
        assert not outside, f"{module.relative_to(PACKAGE)} imports {outside} from outside core/"


def test_imports_point_down_the_flow():
    """Nothing below reaches up: the sidecar, the tmux adapter, the hooks and the core import
    nothing from the commands that use them (panes/, plugin/, cli/, demo/), so a module there
    can change without the watcher's own code moving (function-level imports included)."""
    above = [PACKAGE / name for name in ("panes", "plugin", "cli", "demo")]
    for folder in ("sidecar", "tmux", "hooks", "core"):
        for module in sorted((PACKAGE / folder).rglob("*.py")):
            _, relative = imports(module)
            up = [t for t in relative if any(a in t.parents or t == a for a in above)]
            assert not up, f"{module.relative_to(PACKAGE)} imports {up}: above it in the flow"


def test_the_checker_sees_an_import_from_outside_core(tmp_path):
    core = tmp_path / "pkg" / "core"
    core.mkdir(parents=True)
    (tmp_path / "pkg" / "tmux.py").write_text("")
    (core / "screen.py").write_text("from ..tmux import Tmux\nimport psutil\n")
    absolute, relative = imports(core / "screen.py")
    assert "psutil" in absolute and relative == [tmp_path / "pkg" / "tmux.py"]


def test_each_part_of_the_flow_has_its_folder():
    for folder in ("core", "core/cells", "sidecar", "sidecar/intakes", "tmux", "hooks", "panes",
                   "plugin", "cli", "demo"):
        assert (PACKAGE / folder / "__init__.py").exists(), folder
    # at the top: the two entry points and the process adapter, nothing else
    assert {p.name for p in PACKAGE.glob("*.py")} == {"__init__.py", "__main__.py", "hook.py",
                                                       "procs.py"}


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


def test_every_package_ships_in_the_wheel():
    """A folder missing from pyproject's package list works from the checkout and breaks
    every installed copy (it did: updates/)."""
    import re
    listed = set(re.findall(r'"(tmux_agentstate[\w.]*)"',
                            (PACKAGE.parent / "pyproject.toml").read_text().split("packages = [")[1]
                            .split("]")[0]))
    found = {".".join(p.parent.relative_to(PACKAGE.parent).parts)
             for p in PACKAGE.rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)
