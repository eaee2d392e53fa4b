#!/usr/bin/env python3
"""The release canary: does each covered agent's newest registry release still read right?

    ./scripts/canary                       # every covered agent, every session of its driver
    ./scripts/canary --quick               # one session per agent (the first its driver lists)
    ./scripts/canary --agents kilo,codex   # only these
    ./scripts/canary --keep                # keep the throwaway captures (their folder is printed)

A covered agent is a manifest `manifests/<agent>.toml` with a capture driver `harness/<agent>.py`.
For each: the newest release on its registry (npm `latest`, PyPI's current version; the package
is the driver's NpmRelease / PipRelease `package`), then `harness/<agent>.py install --version V`
and `capture --version V --out <throwaway dir>` (the drivers' CLI, nothing else), then every
capture the driver wrote is replayed and classified by the manifests in force, against the state
its index.toml says. A release its publisher marked end-of-life (PyPI classifier `Development
Status :: 7 - Inactive`, an npm `deprecated` message) is not installed or started: RETIRED.

Prints a table agent x release (right/total, result: ok / N misses / DOES NOT INSTALL: … /
RETIRED), then each miss with its screen; writes fixtures/canary.toml (read by
scripts/accuracy_table.py for the docs' newest-release column). Exit status 1 on any miss or a
release that does not install or capture, 0 otherwise.

Each driver runs in a process group of its own under a timeout, with AGENTSTATE_CANARY_RUN set to
the run's throwaway dir; on a timeout or Ctrl-C the group is killed and then, by PID, every
process naming that dir (its tmux server, the agent, the mock), and the driver's throwaway
session dirs. Nothing else on the machine is touched.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "harness"))

from common import kill_pids, pids_naming  # noqa: E402  (harness/common.py: by PID, never by name)
from tmux_agentstate.core.fixtures import (  # noqa: E402
    CANARY, load_index, load_known_misses, release_key,
)

MARKER = "AGENTSTATE_CANARY_RUN"   # env var naming the run's throwaway dir (for the reap)
INSTALL_TIMEOUT = 1800.0
CAPTURE_TIMEOUT = 2400.0
RETRY_PAUSE = 10.0        # seconds before a failed install is tried once more
RETIRED_CLASSIFIER = "Development Status :: 7 - Inactive"


# -- which agents, which package ------------------------------------------------------------------
def covered_agents(root: Path | None = None) -> list[str]:
    """Every manifest with a driver of the same name (manifests/index.toml has none)."""
    root = root or ROOT
    return sorted(p.stem for p in (root / "manifests").glob("*.toml")
                  if (root / "harness" / f"{p.stem}.py").is_file())


# Run in a fresh interpreter (so a driver's module-level code touches nothing here): import the
# driver and print its release object's registry, package and pinned release as JSON.
_INTROSPECT = r"""
import importlib.util, json, sys
path = sys.argv[1]
sys.argv = [path]
sys.path.insert(0, str(__import__("pathlib").Path(path).parent))
spec = importlib.util.spec_from_file_location("canary_driver", path)
mod = importlib.util.module_from_spec(spec)
sys.modules["canary_driver"] = mod   # dataclasses look their module up
spec.loader.exec_module(mod)
import common
out = None
for v in vars(mod).values():
    if isinstance(v, common.Release):
        pip = isinstance(v, common.PipRelease)
        out = {"registry": "pypi" if pip else "npm", "package": v.package, "pinned": v.pinned}
        break
print(json.dumps(out))
"""


@dataclass
class Driver:
    agent: str
    registry: str = ""
    package: str = ""
    pinned: str = ""
    error: str = ""


def driver_info(agent: str, root: Path | None = None) -> Driver:
    root = root or ROOT
    path = root / "harness" / f"{agent}.py"
    try:
        p = subprocess.run([sys.executable, "-c", _INTROSPECT, str(path)], capture_output=True,
                           text=True, timeout=60, cwd=root)
        said = p.stdout.strip().splitlines()
        info = json.loads(said[-1]) if p.returncode == 0 and said else None
    except (subprocess.TimeoutExpired, ValueError, IndexError) as e:
        return Driver(agent, error=f"cannot read harness/{agent}.py: {e}")
    if not info:
        last = (p.stderr.strip().splitlines() or ["no common.Release (NpmRelease / PipRelease)"])[-1]
        return Driver(agent, error=f"harness/{agent}.py names no registry package ({last})")
    return Driver(agent, info["registry"], info["package"], info.get("pinned", ""))


# -- the registries -------------------------------------------------------------------------------
@dataclass
class Newest:
    version: str = ""
    retired: str = ""     # why the publisher's metadata says end-of-life ("" when not)
    error: str = ""


def npm_newest(package: str) -> Newest:
    try:
        p = subprocess.run(["npm", "view", "--json", package, "version", "deprecated"],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Newest(error=f"npm view {package}: {e}")
    if p.returncode != 0:
        return Newest(error=cause(p.stderr or p.stdout) or f"npm view {package}: exit {p.returncode}")
    try:
        data = json.loads(p.stdout)
    except ValueError:
        return Newest(error=f"npm view {package}: not JSON: {one_line(p.stdout)}")
    if isinstance(data, str):  # one field asked → a bare string; both → an object
        data = {"version": data}
    dep = data.get("deprecated") or ""
    return Newest(str(data.get("version", "")), f"npm: deprecated: {one_line(str(dep))}" if dep else "")


def pypi_newest(package: str) -> Newest:
    try:
        with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as r:
            info = json.load(r)["info"]
    except Exception as e:  # noqa: BLE001 - any network / JSON failure is one line in the table
        return Newest(error=f"PyPI {package}: {e}")
    retired = ""
    if RETIRED_CLASSIFIER in (info.get("classifiers") or []):
        retired = f"PyPI: '{RETIRED_CLASSIFIER}': {one_line(info.get('summary') or '')}"
    return Newest(str(info.get("version", "")), retired)


REGISTRIES = {"npm": npm_newest, "pypi": pypi_newest}


# -- running a driver -----------------------------------------------------------------------------
def one_line(text: str, width: int = 160) -> str:
    lines = [ln.strip() for ln in (text or "").strip().splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= width else line[: width - 1] + "…"


_NOISE = re.compile(r"^(npm (error|ERR!) )+(code|errno|syscall|path|command|signal|A complete log)\b|"
                    r"^(npm (error|ERR!)\s*)+$|complete log of this run|^WARNING: Location")
_CAUSE = re.compile(r"^(npm (error|ERR!) |ERROR: |error: |!! )")


def cause(text: str) -> str:
    """The line of a failed run that says why: the first npm / pip error line that is not a
    code or a log path, else the last line."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip() and not _NOISE.search(ln.strip())]
    for ln in lines:
        if _CAUSE.match(ln):
            return one_line(re.sub(r"^(npm (error|ERR!) )+", "npm error ", ln))
    return one_line(lines[-1]) if lines else ""


def kill_group(proc: subprocess.Popen) -> None:
    """The driver's process group (it runs in a session of its own), TERM then KILL."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(3)
            return
        except subprocess.TimeoutExpired:
            pass


def agents_dir() -> Path:
    return Path(os.environ.get("AGENTSTATE_AGENTS_DIR", "/work/agents"))


def reap_sessions(agent: str, pid: int) -> None:
    """The driver's own throwaway session dirs (<agent>-run-<session>-<pid>-<epoch> and the
    like: named with its PID) and whatever still names them."""
    for d in agents_dir().glob(f"{agent}-*-{pid}-*"):
        kill_pids(pids_naming(str(d)))
        shutil.rmtree(d, ignore_errors=True)


def reap(run_dir: Path, agent: str, pid: int) -> None:
    """After a killed driver: every process naming the run's throwaway dir (the marker is in
    their environment: its tmux server, the agent, the mock), then its session dirs."""
    kill_pids(pids_naming(str(run_dir)))
    reap_sessions(agent, pid)


@dataclass
class Run:
    rc: int | None          # None: timed out
    log: Path
    pid: int = 0

    def last(self) -> str:
        """Why it failed, in one line (from the end of its log: this run's part)."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return cause(text.rsplit("\n$ ", 1)[-1])


class Interrupted(Exception):
    pass


def run_driver(cmd: list[str], *, run_dir: Path, agent: str, log: Path, timeout: float) -> Run:
    """`cmd` in its own process group, output to `log`; on timeout or Ctrl-C the group is
    killed and the run reaped (Ctrl-C then goes on as Interrupted)."""
    env = {**os.environ, MARKER: str(run_dir), "PYTHONUNBUFFERED": "1"}
    with open(log, "ab") as out:
        out.write(f"$ {' '.join(cmd)}\n".encode())
        out.flush()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, cwd=ROOT, start_new_session=True)
    try:
        return Run(proc.wait(timeout), log, proc.pid)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        reap(run_dir, agent, proc.pid)
        with open(log, "a") as out:
            out.write(f"\n!! canary: killed after {timeout:.0f} s\n")
        return Run(None, log, proc.pid)
    except KeyboardInterrupt:
        kill_group(proc)
        reap(run_dir, agent, proc.pid)
        raise Interrupted() from None


def first_session(python: str, driver: Path, timeout: float = 120) -> str | None:
    """The first session `driver list` prints (its first word, without a trailing ':')."""
    try:
        p = subprocess.run([python, str(driver), "list"], capture_output=True, text=True,
                           timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None
    for line in p.stdout.splitlines():
        if line.strip():
            return line.split()[0].rstrip(":")
    return None


# -- scoring --------------------------------------------------------------------------------------
@dataclass
class Miss:
    name: str
    want: str
    got: str
    rule: str
    screen: list[str]
    known: bool = False


def score(out_root: Path, agent: str, catalog) -> tuple[int, int, list[Miss]]:
    """(right, total, misses) of every capture under out_root/<agent>/ (its index.toml)."""
    from tmux_agentstate.core.screen import replay
    known = load_known_misses()
    manifest = catalog.get(agent)
    right, total, misses = 0, 0, []
    for f in load_index(out_root):
        if f.agent != agent or not f.path.is_file():
            continue
        total += 1
        screen = replay(f.path.read_bytes(), f.rows, f.cols)
        m = manifest.evaluate(screen.view()) if manifest else None
        got = m.state if m else "no manifest"
        if got == f.state:
            right += 1
            continue
        k = known.get(f"{agent}/{f.path.stem}") or known.get(f"{agent}/{f.agent_version}/{f.path.stem}")
        misses.append(Miss(f"{f.agent_version}/{f.path.stem}", f.state, got,
                           getattr(m, "rule", "") or "", screen.rows(),
                           known=bool(k and k.verdict == got)))
    return right, total, misses


# -- one agent ------------------------------------------------------------------------------------
@dataclass
class Row:
    agent: str
    registry: str = ""
    package: str = ""
    release: str = ""
    pinned: str = ""
    right: int = 0
    total: int = 0
    result: str = ""      # ok | misses | does-not-install | retired | failed
    note: str = ""        # the one line behind does-not-install / retired / failed
    misses: list[Miss] = field(default_factory=list)

    def against_pinned(self) -> str:
        """The newest release against the driver's pinned one (release_key orders both)."""
        if not self.release or not self.pinned:
            return "?"
        a, b = release_key(self.release), release_key(self.pinned)
        return "same" if a == b else "newer" if a > b else "OLDER"

    @property
    def new_misses(self) -> list[Miss]:
        return [m for m in self.misses if not m.known]

    def cell(self) -> str:
        if self.result == "ok":
            known = len(self.misses)
            return "ok" + (f" ({known} known miss{'es' if known > 1 else ''})" if known else "")
        if self.result == "misses":
            n = len(self.new_misses)
            return f"{n} miss{'es' if n != 1 else ''}"
        if self.result == "does-not-install":
            return f"DOES NOT INSTALL: {self.note}"
        if self.result == "retired":
            return f"RETIRED ({self.note})"
        return f"FAILED: {self.note}"

    @property
    def bad(self) -> bool:
        return self.result in ("misses", "does-not-install", "failed")


def check_agent(agent: str, *, run_root: Path, quick: bool, catalog, python: str,
                install_timeout: float, capture_timeout: float, keep: bool = False, log=print) -> Row:
    drv = driver_info(agent)
    row = Row(agent, drv.registry, drv.package, pinned=drv.pinned)
    if drv.error:
        row.result, row.note = "failed", drv.error
        return row
    newest = REGISTRIES[drv.registry](drv.package)
    if newest.error or not newest.version:
        row.result, row.note = "failed", newest.error or "the registry names no release"
        return row
    row.release = newest.version
    if newest.retired:
        row.result, row.note = "retired", newest.retired
        return row
    driver = ROOT / "harness" / f"{agent}.py"   # ROOT read now: the tests point it elsewhere
    logs = run_root / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    log(f"-- {agent}: {drv.registry} {drv.package} {newest.version} (pinned {drv.pinned or '?'})")
    for attempt in (1, 2):   # once more after a failure: the shared agents folder can be
        # mid-install by another run of the same release (npm's ENOTEMPTY, "Text file busy")
        inst = run_driver([python, str(driver), "install", "--version", newest.version],
                          run_dir=run_root, agent=agent, log=logs / f"{agent}-install.log",
                          timeout=install_timeout)
        if inst.rc in (0, None):
            break
        if attempt == 1:
            log(f"   install failed ({inst.last()}); once more")
            time.sleep(RETRY_PAUSE)
    if inst.rc != 0:
        why = f"timed out after {install_timeout:.0f} s" if inst.rc is None else inst.last()
        row.result, row.note = "does-not-install", why or f"install exit {inst.rc}"
        return row
    cmd = [python, str(driver), "capture", "--version", newest.version,
           "--out", str(run_root / "captures" / agent)]
    if quick:
        only = first_session(python, driver)
        if only:
            cmd += ["--only", only]
    cap = run_driver(cmd, run_dir=run_root, agent=agent, log=logs / f"{agent}-capture.log",
                     timeout=capture_timeout)
    if not keep:   # the driver's throwaway session dirs (named with its PID), once it is done
        reap_sessions(agent, cap.pid)
    row.right, row.total, row.misses = score(run_root / "captures", agent, catalog)
    failed = [ln for ln in cap.log.read_text(errors="replace").splitlines() if ln.startswith("!!")]
    if row.total == 0:
        row.result = "failed"
        row.note = ("capture " + ("timed out" if cap.rc is None else f"exit {cap.rc}") + ", no captures: "
                    + (one_line(failed[0]) if failed else cap.last()))
    else:
        row.result = "misses" if row.new_misses else "ok"
        if cap.rc is None or failed:
            row.note = one_line(failed[0]) if failed else "capture timed out"
    return row


# -- output ---------------------------------------------------------------------------------------
def table(rows: list[Row]) -> str:
    head = ("agent", "registry", "newest", "pinned", "vs pinned", "right/total", "result")
    body = [(r.agent, r.registry, r.release or "?", r.pinned or "?", r.against_pinned(),
             f"{r.right}/{r.total}" if r.total else "–", r.cell()) for r in rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head) - 1)]
    lines = []
    for cells in [head, *body]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)) + "  " + cells[-1])
    for r in rows:
        if r.note and r.result in ("ok", "misses"):
            lines.append(f"  note {r.agent}: {r.note}")
    return "\n".join(lines)


def misses_text(rows: list[Row]) -> str:
    out = []
    for r in rows:
        for m in r.misses:
            tag = " (a known miss: fixtures/known-misses.toml)" if m.known else ""
            out.append(f"\n== MISS {r.agent} {m.name}: want {m.want}, got {m.got}"
                       f"{' via ' + repr(m.rule) if m.rule else ''}{tag}")
            out += ["  |" + line for line in m.screen]
    return "\n".join(out)


# -- fixtures/canary.toml -------------------------------------------------------------------------
def q(v: str) -> str:
    return json.dumps(v, ensure_ascii=False)


def write_canary(path: Path, rows: list[Row], date: str, quick: bool) -> None:
    """Rows for the agents just run; the other agents' rows already there are kept."""
    from tmux_agentstate.core.fixtures import load_canary
    try:
        old = {} if not path.exists() else load_canary(path)
    except ValueError:
        old = {}
    new = {r.agent: {"agent": r.agent, "release": r.release, "registry": r.registry,
                     "package": r.package, "right": r.right, "total": r.total,
                     "result": r.result, "note": r.note, "quick": quick, "date": date}
           for r in rows}
    merged = {**{a: vars(c) for a, c in old.items()}, **new}
    lines = ["# The release canary's last run per agent (scripts/release_canary.py writes it;",
             "# scripts/accuracy_table.py shows it as the newest-release column).", ""]
    for agent in sorted(merged):
        e = merged[agent]
        lines.append("[[agent]]")
        for k in ("agent", "release", "registry", "package", "right", "total", "result", "note",
                  "quick", "date"):
            v = e.get(k, "")
            text = str(v).lower() if isinstance(v, bool) else str(v) if isinstance(v, int) else q(str(v))
            lines.append(f"{k} = {text}")
        lines.append("")
    path.write_text("\n".join(lines))


# -- main -----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", help="comma-separated agents (default: every covered agent)")
    ap.add_argument("--quick", action="store_true", help="one session per agent")
    ap.add_argument("--keep", action="store_true", help="keep the throwaway captures")
    ap.add_argument("--install-timeout", type=float, default=INSTALL_TIMEOUT, help="seconds")
    ap.add_argument("--capture-timeout", type=float, default=CAPTURE_TIMEOUT, help="seconds")
    ap.add_argument("--canary-file", type=Path, default=ROOT / "fixtures" / CANARY,
                    help="where the results go (default fixtures/canary.toml)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)

    covered = covered_agents()
    agents = covered
    if args.agents:
        agents = [a.strip() for a in args.agents.split(",") if a.strip()]
        unknown = [a for a in agents if a not in covered]
        if unknown:
            ap.error(f"not covered (no manifests/<agent>.toml + harness/<agent>.py): {', '.join(unknown)}; "
                     f"covered: {', '.join(covered)}")
    from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
    catalog = Catalog([BUNDLED_DIR])
    run_root = Path(tempfile.mkdtemp(prefix="agentstate-canary-"))
    print(f"canary: {len(agents)} agents, throwaway dir {run_root}", flush=True)
    rows: list[Row] = []
    interrupted = False
    try:
        for agent in agents:
            rows.append(check_agent(agent, run_root=run_root, quick=args.quick, catalog=catalog,
                                    python=sys.executable, install_timeout=args.install_timeout,
                                    capture_timeout=args.capture_timeout, keep=args.keep,
                                    log=lambda s: print(s, flush=True)))
            print(f"   {rows[-1].agent}: {rows[-1].cell()}", flush=True)
    except (Interrupted, KeyboardInterrupt):
        interrupted = True
        print("\ncanary: interrupted; the running driver was killed", flush=True)
    finally:
        if not args.keep:
            kill_pids(pids_naming(str(run_root)))
            shutil.rmtree(run_root, ignore_errors=True)
    print()
    print(table(rows))
    text = misses_text(rows)
    if text:
        print(text)
    if args.keep:
        print(f"\ncaptures and logs kept in {run_root}")
    if rows and not interrupted and not args.no_write:
        write_canary(args.canary_file, rows, dt.date.today().isoformat(), args.quick)
    if interrupted:
        return 130
    return 1 if any(r.bad for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
