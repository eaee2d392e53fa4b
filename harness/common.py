"""What the per-agent capture drivers in this folder share.

- Paths: HERE (this folder), REPO, AGENTS (where the agents, their throwaway homes and the logs
  live: $AGENTSTATE_AGENTS_DIR or /work/agents).
- The fixture index (`fixtures/<agent>/index.toml`): load_index, write_index, write_merged_index.
- Process hygiene: pids_naming / kill_pids / reap (by PID, never by process name: other agents
  run on this machine).
- Mock: one mock model server (harness/mock_*.py) on a free port.
- Release (NpmRelease / PipRelease): an npm (PyPI) agent's prefix (venv), binary and fixture
  folder at one release, repointed by `--version`; release differences as tables (`pick`,
  `since`, `until`, `older_than`); Session, session_dirs, demo_project: the newer drivers'
  session shape (`sized`: one script at the usual three sizes), throwaway dirs and git project;
  home_config: a setup writing one config file.
- Ctx: what a session script gets (the recording, waits on tmux's own view, `shot`); what
  idle / working / a dialog look like and the settle times are its class data.
- Scenarios as data: step types (Prompt, Idle, Dialog, Working, Busy, Shot, Keys, Type...; `turn`,
  `ask`; ByRelease for a release's own steps) run by run_steps; Driver: a whole driver (release,
  Ctx, sessions, mock, env) as data.
- run_session / capture / main: the per-session plumbing and the install/capture/list CLI of the
  drivers that take `--only NAME` (all but claude.py, which has its own).

Agent-specific logic (how to set up HOME, what "idle" looks like, the session scripts) stays in
each driver. Nothing in the package imports this. A driver on the framework (droid.py is the
smallest) is, in outline:

    AGENT = NpmRelease("agent", "npm-package", "bin-name", pinned="1.2.3")

    class Ctx(common.Ctx):
        release = AGENT
        is_idle = staticmethod(lambda s: FOOTER in s and WORKING not in s)
        is_working = staticmethod(lambda s: WORKING in s)
        dialog = "Enter select"            # what wait_dialog waits for unless told
        take_mode = "matching"

    FIRST_80 = [Idle("idle-start", "start", "fresh start"),
                ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
                    "the command's approval", ("Enter",)),
                Working("working-tool-running", "tool-running", "approved; the command runs"),
                Idle("idle-after-approve", "after-approve", "the command finished"),
                ByRelease({"2.0.0": [...], "0.0.0": [...]})]   # a release's own steps

    DRIVER = Driver(AGENT, "Agent CLI", __doc__, Ctx, [Session("first-80", 24, 80, run=FIRST_80)],
                    openai_mock(20, 20), env=lambda sess, home, proj, mock: {"HOME": str(home)})
    if __name__ == "__main__":
        DRIVER.main()   # install | capture [--only NAME] | list, --version V, --out DIR
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
AGENTS = Path(os.environ.get("AGENTSTATE_AGENTS_DIR", "/work/agents"))
sys.path.insert(0, str(HERE))
from tmuxrec import Recording  # noqa: E402

FIXTURE_KEYS = ("file", "state", "kind", "agent", "agent_version", "size", "how", "mark")
OPTIONAL_KEYS = {"mark"}  # written only when set: `mark` = the [[marks]] mark the screen shows
SIZE_NOTE = "# size is ROWSxCOLS; file names are COLSxROWS-<state>-<situation>."


# -- the fixture index ----------------------------------------------------------------------------
def vtuple(v: str) -> tuple[int, ...]:
    """A release as numbers, for comparing (`0.1.4` < `0.24.4`; a `-suffix` ignored)."""
    return tuple(int(x) for x in re.findall(r"\d+", v.split("-")[0]))


def q(v: str) -> str:
    """A TOML basic string (JSON's escaping is valid TOML)."""
    return json.dumps(v, ensure_ascii=False)


def load_index(out: Path) -> dict:
    """`out/index.toml` as {fixture name: entry}, in file order ({} when there is none)."""
    path = out / "index.toml"
    if not path.exists():
        return {}
    import tomllib
    data = tomllib.loads(path.read_text())
    return {Path(f["file"]).stem: f for f in data.get("fixture", [])}


def write_index(out: Path, entries: Iterable[dict], header: list[str],
                keys: Iterable[str] = FIXTURE_KEYS) -> None:
    """Write `out/index.toml`: the header comment lines, a blank line, one [[fixture]] each."""
    lines = [*header, ""]
    for e in entries:
        lines.append("[[fixture]]")
        lines += [f"{k} = {q(e[k])}" for k in keys if k in e or k not in OPTIONAL_KEYS]
        lines.append("")
    (out / "index.toml").write_text("\n".join(lines))


def write_merged_index(out: Path, index: dict, title: str) -> None:
    """The drivers' merged index: every entry whose .raw exists, sorted by name."""
    write_index(out, [index[n] for n in sorted(index) if (out / index[n]["file"]).exists()],
                [title, SIZE_NOTE])


# -- processes ------------------------------------------------------------------------------------
def pids_naming(needle: str) -> list[int]:
    """PIDs of processes whose cmdline or environment contains `needle` (our unique dir)."""
    out = []
    nb = needle.encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if nb in (d / "cmdline").read_bytes() or nb in (d / "environ").read_bytes():
                out.append(int(d.name))
        except OSError:
            pass
    return out


def kill_pids(pids: list[int]) -> None:
    """TERM, then KILL what is left after 2 s; a process gone or not ours is passed over."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            try:
                os.kill(p, sig)
            except (ProcessLookupError, PermissionError):
                pass
        deadline = time.time() + 2
        while time.time() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)
        pids = [p for p in pids if Path(f"/proc/{p}").exists()]
        if not pids:
            return


def reap(home: Path) -> None:
    """After a session: kill every process naming its unique HOME, then delete HOME."""
    kill_pids(pids_naming(str(home)))
    time.sleep(0.3)
    left = pids_naming(str(home))
    if left:
        print(f"!! still alive after kill: {left}", flush=True)
    shutil.rmtree(home, ignore_errors=True)


# -- the mock model server ------------------------------------------------------------------------
class Mock:
    """harness/<script> on a free port (the mocks print "PORT <n>" first), logging to `log`.

    The OpenAI/Gemini/pi mocks take the port as an argument and `--slow-seconds` /
    `--delay-seconds`; the Anthropic one takes `--port` (port_option=True)."""

    def __init__(self, script: str, log: Path, *, slow: float | None = None,
                 delay: float | None = None, port_option: bool = False):
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        args = (["--port", "0"] if port_option else ["0"]) + ["--log", str(log)]
        if slow is not None:
            args += ["--slow-seconds", str(slow)]
        if delay is not None:
            args += ["--delay-seconds", str(delay)]
        self.proc = subprocess.Popen([sys.executable, str(HERE / script), *args],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().split()[1])

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# -- install --------------------------------------------------------------------------------------
def npm_install(prefix: Path, bin_: Path, package: str, version: str) -> None:
    """`npm install --prefix PREFIX package@version` unless `bin_ --version` already says it."""
    if bin_.exists():
        out = subprocess.run([str(bin_), "--version"], capture_output=True, text=True).stdout
        if version in out:
            print(f"already installed: {out.strip()} in {prefix}")
            return
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--no-fund", "--no-audit", "--prefix", str(prefix),
                    f"{package}@{version}"], check=True)
    print(subprocess.run([str(bin_), "--version"], capture_output=True, text=True).stdout)


class Release:
    """One agent CLI at one release: its install prefix, its binary and its fixture folder.
    `configure(version, out)` (the drivers' `--version V` / `--out DIR`) repoints all three; the
    pinned release keeps `fixtures/<agent>/`. A driver's Ctx names it as `release`.

    What differs between releases is data, asked of the release being driven:
    `older_than(v)` / `since(v)` / `until(v)`, and `pick(table)` for a newest-first
    [(release, value), ...] table (the value of the newest release listed not newer than this
    one). A subclass says where the binary is (`bin_path`) and how to `install`."""

    def __init__(self, agent: str, package: str, bin_name: str, pinned: str):
        self.agent, self.package, self.bin_name, self.pinned = agent, package, bin_name, pinned
        self.version = pinned
        self.configure(None, None)

    def bin_path(self) -> Path:
        raise NotImplementedError

    def configure(self, version: str | None, out: Path | None) -> None:
        self.version = version or self.version
        self.prefix = AGENTS / f"{self.agent}-{self.version}"
        self.bin = self.bin_path()
        self.out = out.resolve() if out else (REPO / "fixtures" / self.agent if self.version == self.pinned
                                              else release_out(self.agent, self.version))

    def install(self) -> None:
        raise NotImplementedError

    # release differences as data ----------------------------------------------------------------
    def older_than(self, v: str) -> bool:
        return vtuple(self.version) < vtuple(v)

    def since(self, v: str) -> bool:
        """This release is `v` or newer (a "since" table entry applies)."""
        return not self.older_than(v)

    def until(self, v: str) -> bool:
        """This release is older than `v` (an "until" table entry applies)."""
        return self.older_than(v)

    def pick(self, table):
        """The value for this release in a newest-first [(release, value), ...] table (or a dict
        {release: value}): that of the newest release listed not newer than this one; the oldest
        entry's value for anything older."""
        rows = sorted(table.items() if isinstance(table, dict) else table,
                      key=lambda r: vtuple(r[0]), reverse=True)
        for since, value in rows:
            if self.since(since):
                return value
        return rows[-1][1]


class NpmRelease(Release):
    """An agent CLI from npm: `npm install --prefix AGENTS/<agent>-<version> package@version`,
    the binary `node_modules/.bin/<name>`."""

    def bin_path(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.bin_name

    def install(self) -> None:
        npm_install(self.prefix, self.bin, self.package, self.version)


def pip_install(venv: Path, bin_: Path, package: str, version: str, python: str) -> None:
    """A venv at VENV made by `python`, with `package==version`, unless `bin_` already runs it."""
    stamp_file = venv / ".installed"
    if bin_.exists() and stamp_file.exists() and stamp_file.read_text().strip() == version:
        print(f"already installed: {package} {version} in {venv}")
        return
    subprocess.run([python, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                    f"{package}=={version}"], check=True)
    stamp_file.write_text(version)
    print(f"installed {package} {version} in {venv}")


def python_of(version: str) -> str:
    """A Python `version` ("3.12") that runs: `python3.12` on PATH if it answers (a pyenv shim
    refuses while another version is selected), else pyenv's `versions/3.12*`; the bare name as
    the last resort (the venv step then says why)."""
    name = f"python{version}"
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for cand in (name, *map(str, sorted(root.glob(f"versions/{version}*/bin/{name}")))):
        try:
            said = subprocess.run([cand, "--version"], capture_output=True, text=True).stdout
        except OSError:
            continue
        if said.startswith(f"Python {version}"):
            return cand
    return name


class PipRelease(Release):
    """One agent CLI from PyPI at one release, in its own venv `AGENTS/<agent>-<version>` made by
    this Python, or by a Python `python` ("3.13", found by python_of when installing) for a CLI
    that needs another. The binary is the venv's `bin/<name>`."""

    def __init__(self, agent: str, package: str, bin_name: str, pinned: str, python: str = ""):
        self.python_version = python
        super().__init__(agent, package, bin_name, pinned)

    @property
    def python(self) -> str:
        return python_of(self.python_version) if self.python_version else sys.executable

    def bin_path(self) -> Path:
        return self.prefix / "bin" / self.bin_name

    def install(self) -> None:
        pip_install(self.prefix, self.bin, self.package, self.version, self.python)


# -- one session ----------------------------------------------------------------------------------
@dataclass
class Session:
    """A session script at one pane size, in a project folder of that name."""
    name: str
    rows: int
    cols: int
    project: str = "proj"
    run: Callable = None


SIZES = [(24, 80, "webshop"), (36, 120, "ledger"), (48, 160, "cache-service")]   # rows, cols, project


def sized(run, names: str | Iterable[str] = ("first-80", "mid-120", "big-160"), cls: type = Session,
          **fields) -> list:
    """The usual three sessions of one script, one at each of SIZES: named `names` (or
    `<names>-<cols>` for a str), of class `cls` with `fields`."""
    names = [f"{names}-{c}" for _, c, _ in SIZES] if isinstance(names, str) else names
    return [cls(n, r, c, project=p, run=run, **fields) for n, (r, c, p) in zip(names, SIZES)]


def session_dirs(agent: str, sess) -> tuple[Path, Path, Path]:
    """(base, home, project) for one run: a throwaway folder of its own under AGENTS."""
    base = AGENTS / f"{agent}-run-{stamp(sess)}"
    return base, base / "home", base / sess.project


def demo_project(proj: Path, folders: Iterable[str] = ("src", "docs")) -> None:
    """The small git project every session works in (the mock's tools write into src/, docs/:
    some agents' create tools refuse a file whose folder is missing)."""
    proj.mkdir(parents=True)
    for d in folders:
        (proj / d).mkdir()
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)


def tmux_env() -> dict[str, str]:
    """The env every driver's agent gets last (after its own HOME/provider variables)."""
    return {"TERM": "tmux-256color", "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def stamp(sess) -> str:
    """A session's unique tag for its throwaway dirs: <name>-<pid>-<epoch>."""
    return f"{sess.name}-{os.getpid()}-{int(time.time())}"


_SETTLE = object()  # shot(): "the driver's default settle"


class Ctx:
    """What a session's script gets: the recording plus wait / prompt / snapshot helpers.

    A driver subclasses it and sets `agent`, `version`, `out`; it may change `settle` (the
    default quiet time before a shot), `key_pause`, `columns` (the widths of the printed
    name / kind / bytes), `probe` (what wait predicates get), `take` (how the bytes and tmux's
    screen are copied) and `detail` (the end of the printed line)."""

    agent = ""
    version = ""
    out: Path = REPO / "fixtures"
    release: Release | None = None   # if set, version and out are read from it
    settle: float | None = 0.6
    key_pause = 0.35
    columns = (44, 24, 7)
    # What the screen says, as class data, for wait_idle / wait_working / wait_dialog / prompt:
    # predicates (staticmethod(f), f gets what `probe` gives: the screen) and a dialog needle
    # (a string on screen, or a predicate). `started`: what `prompt` takes as "the prompt was
    # taken" (default: working or a dialog). Settle times and timeouts as data too.
    is_idle: Callable[..., bool] | None = None
    is_working: Callable[..., bool] | None = None
    dialog: str | Callable[..., bool] | None = None
    started: Callable[..., bool] | None = None
    idle_what, working_what, dialog_what = "idle input box", "working", "a dialog"
    idle_settle, dialog_settle = 0.8, 0.6        # quiet time after idle / a dialog showed
    idle_timeout, dialog_timeout, working_timeout = 90, 60, 60
    type_pause = 0.5                             # after typing a prompt, before its Enter
    take_mode = "snapshot"                       # "snapshot" | "matching" | "quiet": see take()
    proj: Path | None = None    # the session's project folder (a Driver sets it)
    mock: Mock | None = None    # the session's mock model server (a Driver sets it)

    def __init__(self, sess, rec: Recording, only: str | None, index: dict):
        self.s, self.rec, self.only, self.index = sess, rec, only, index
        if self.release is not None:  # configured after the class was defined
            self.agent, self.version, self.out = self.release.agent, self.release.version, self.release.out
        self.made: list[str] = []

    # the data-driven waits ------------------------------------------------------------------------
    def wait_idle(self, timeout: float | None = None) -> str:
        scr = self.wait(self.is_idle, self.idle_what, timeout or self.idle_timeout)
        self.rec.settle(self.idle_settle, timeout=10)
        return scr

    def wait_working(self, timeout: float | None = None) -> str:
        return self.wait(self.is_working, self.working_what, timeout or self.working_timeout)

    def wait_dialog(self, needle: str | Callable[..., bool] | None = None, timeout: float | None = None) -> str:
        what = needle or self.dialog
        timeout = timeout or self.dialog_timeout
        scr = (self.wait_text(what, timeout) if isinstance(what, str)
               else self.wait(what, self.dialog_what, timeout))
        self.rec.settle(self.dialog_settle, timeout=10)
        return scr

    def in_dialog(self, s: str) -> bool:
        d = self.dialog
        return bool(d in s if isinstance(d, str) else d(s)) if d else False

    def has_started(self, m: int) -> bool:
        scr = self.rec.screen()
        if self.started is not None:
            return bool(self.started(scr))
        return bool(self.is_working(scr)) or self.in_dialog(scr)

    def prompt(self, text: str) -> None:
        """Wait for idle, type `text` (one literal send), Enter until `has_started`."""
        self.wait_idle()
        self.rec.send(text, literal=True)
        time.sleep(self.type_pause)
        self.submit(text, self.has_started)

    # waiting on tmux's own view ---------------------------------------------------------------
    def probe(self) -> tuple[tuple, str, str]:
        """(arguments for a wait predicate, the screen, a note for the timeout message)."""
        scr = self.rec.screen()
        return (scr,), scr, ""

    def wait(self, pred: Callable[..., bool], what: str, timeout: float = 60) -> str:
        end = time.time() + timeout
        while True:
            args, scr, note = self.probe()
            if pred(*args):
                return scr
            if time.time() > end:
                raise TimeoutError(f"[{self.s.name}] never saw {what}{note}\n{scr}")
            time.sleep(0.1)

    def wait_text(self, needle: str, timeout: float = 60) -> str:
        return self.wait(lambda s, *_: needle in s, repr(needle), timeout)

    # keys ---------------------------------------------------------------------------------------
    def key(self, *keys: str, pause: float | None = None) -> None:
        for k in keys:
            self.rec.send(k)
            time.sleep(self.key_pause if pause is None else pause)

    def new_bytes(self, mark: int) -> bytes:
        return self.rec.raw.read_bytes()[mark:]

    def submit(self, text: str, started: Callable[[int], bool], *, mark: Callable[[], int] | None = None,
               window: float = 5.0, verb: str = "submitted") -> None:
        """Press Enter until `started(m)` (m = `mark()` just before that Enter; by default the
        recorded byte count), up to 3 times, `window` seconds each."""
        mark = mark or (lambda: self.rec.raw.stat().st_size)
        for _ in range(3):
            m = mark()
            self.rec.send("Enter")
            end = time.time() + window
            while time.time() < end:
                if started(m):
                    return
                time.sleep(0.1)
        raise TimeoutError(f"[{self.s.name}] prompt never {verb}: {text!r}\n{self.rec.screen()}")

    def type_and_submit(self, text: str, started: Callable[[int], bool]) -> None:
        """Type a prompt a character at a time (';' escaped), then `submit` it."""
        self.rec.type(text, enter=False, delay=0.01)
        time.sleep(0.5)
        self.submit(text, started)

    # snapshots ----------------------------------------------------------------------------------
    def take(self, dest: Path, settle: float | None) -> dict:
        """`take_mode`: "snapshot" (the bytes after `settle` s quiet), "matching"
        (take_matching) or "quiet" (the recorder's snapshot_quiet)."""
        if self.take_mode == "matching":
            return self.take_matching(dest, settle)
        if self.take_mode == "quiet":
            return self.rec.snapshot_quiet(dest, settle=settle)
        return self.rec.snapshot(dest, settle=settle)

    def replays_like_tmux(self, raw: Path, tmux_screen: str) -> bool:
        """Our emulator's screen of the saved bytes is exactly tmux's (what the tests check)."""
        sys.path.insert(0, str(REPO))
        from tmux_agentstate.core.screen import replay
        want = [line.rstrip() for line in tmux_screen.split("\n")]
        want = (want + [""] * self.s.rows)[: self.s.rows]
        return replay(raw.read_bytes(), self.s.rows, self.s.cols).rows() == want

    def take_matching(self, dest: Path, settle: float | None) -> dict:
        """A `take` for a TUI that never goes quiet while it works (a timer, a spinner): the byte
        copy and tmux's screen can be a frame apart, so retake (unsettled) until the replayed
        bytes give exactly tmux's screen."""
        for _ in range(20):
            facts = self.rec.snapshot(dest, settle=settle)
            if self.replays_like_tmux(dest, facts["tmux_screen"]):
                break
            settle = None
        return facts

    def detail(self, facts: dict, dest: Path) -> str:
        return ""

    def shot(self, suffix: str, state: str, kind: str, how: str, settle=_SETTLE) -> None:
        """Save the bytes so far as fixture <COLS>x<ROWS>-<suffix> (unless --only names another)."""
        name = f"{self.s.cols}x{self.s.rows}-{suffix}"
        if self.only and self.only != self.s.name and self.only != name:
            return
        dest = self.out / f"{name}.raw"
        facts = self.take(dest, self.settle if settle is _SETTLE else settle)
        (self.out / f"{name}.screen.txt").write_text(facts["tmux_screen"])
        wn, wk, wb = self.columns
        print(f"  {name:{wn}s} {state:8s} {kind:{wk}s} {facts['bytes']:{wb}d}B"
              f"{self.detail(facts, dest)}", flush=True)
        self.index[name] = {"file": f"{name}.raw", "state": state, "kind": kind, "agent": self.agent,
                            "agent_version": self.version, "size": f"{self.s.rows}x{self.s.cols}",
                            "how": how}
        self.made.append(name)


# -- scenarios as data ----------------------------------------------------------------------------
# A scenario is a list of steps, run in order by run_steps(c, steps) against a driver's Ctx `c`.
# A step is anything callable with `c` (a plain function is one, for what is one driver's own); a
# list inside the list is run in place. Text (a prompt, a `how`) may be a function of `c`.
def _text(v, c: Ctx) -> str:
    return v(c) if callable(v) else v


def _state(suffix: str) -> str:
    return suffix.split("-")[0]


@dataclass
class Shot:
    """A fixture of the screen now: `<COLS>x<ROWS>-<suffix>`, its state the suffix's first word."""
    suffix: str
    kind: str
    how: str | Callable
    settle: object = _SETTLE
    state: str | None = None   # when the suffix's first word is not the state

    def __call__(self, c: Ctx) -> None:
        c.shot(self.suffix, self.state or _state(self.suffix), self.kind, _text(self.how, c), settle=self.settle)


@dataclass
class Prompt:
    """Type a prompt and submit it (the Ctx's `prompt`); then, with `wait`, wait for that text."""
    text: str | Callable
    wait: str | Callable | None = None

    def __call__(self, c: Ctx) -> None:
        c.prompt(_text(self.text, c))
        if self.wait:
            c.wait_text(_text(self.wait, c))


@dataclass
class Idle:
    """Wait for the idle screen (optionally `timeout`), then shoot it (a settled shot); with no
    suffix, only wait."""
    suffix: str | None = None
    kind: str = ""
    how: str | Callable = ""
    timeout: float | None = None

    def __call__(self, c: Ctx) -> None:
        c.wait_idle(**({"timeout": self.timeout} if self.timeout else {}))
        if self.suffix:
            Shot(self.suffix, self.kind, self.how)(c)


@dataclass
class Dialog:
    """Wait for a dialog (`needle`: its text or a predicate; default the Ctx's `dialog`), shoot it,
    then answer it with `answer` (keys), if any."""
    suffix: str
    kind: str
    how: str | Callable
    answer: tuple = ()
    needle: object = None
    settle: object = _SETTLE

    def __call__(self, c: Ctx) -> None:
        c.wait_dialog(self.needle)
        Shot(self.suffix, self.kind, self.how, self.settle)(c)
        if self.answer:
            c.key(*self.answer)


@dataclass
class Working:
    """`delay` s into a turn (after waiting for the working screen, unless wait=False), an
    unsettled shot (a working screen never goes quiet)."""
    suffix: str
    kind: str
    how: str | Callable
    delay: float = 3.0
    wait: bool = True

    def __call__(self, c: Ctx) -> None:
        if self.wait:
            c.wait_working()
        time.sleep(self.delay)
        Shot(self.suffix, self.kind, self.how, settle=None)(c)


@dataclass
class Busy:
    """Wait for the working screen, then `delay` s more (say, before an interrupt)."""
    delay: float = 3.0

    def __call__(self, c: Ctx) -> None:
        c.wait_working()
        time.sleep(self.delay)


@dataclass
class Keys:
    """Press keys (`pause` after each, default the Ctx's key_pause); then, with `settle`, wait
    that long for the screen to go quiet."""
    keys: tuple
    settle: float | None = None
    pause: float | None = None

    def __call__(self, c: Ctx) -> None:
        c.key(*self.keys, pause=self.pause)
        if self.settle is not None:
            c.rec.settle(self.settle)


def keys(*ks: str, settle: float | None = None) -> Keys:
    return Keys(ks, settle)


def send(*ks: str) -> Keys:
    """Keys sent with no pause after them."""
    return Keys(ks, pause=0)


@dataclass
class TypeChars:
    """Type text a character at a time (`delay` between), then settle `settle` s."""
    text: str
    delay: float = 0.02
    settle: float | None = 0.6

    def __call__(self, c: Ctx) -> None:
        for ch in self.text:
            c.rec.send(ch, literal=True)
            time.sleep(self.delay)
        if self.settle is not None:
            c.rec.settle(self.settle)


@dataclass
class Type:
    """Type text into the screen (one literal send), then pause `pause` s."""
    text: str
    pause: float = 0.5

    def __call__(self, c: Ctx) -> None:
        c.rec.send(self.text, literal=True)
        time.sleep(self.pause)


@dataclass
class Sleep:
    """Sleep; then, with `settle`, wait that long for the screen to go quiet."""
    seconds: float
    settle: float | None = None

    def __call__(self, c: Ctx) -> None:
        time.sleep(self.seconds)
        if self.settle is not None:
            c.rec.settle(self.settle)


@dataclass
class WaitText:
    """Wait for text on screen; then, with `settle`, for the screen to go quiet."""
    text: str | Callable
    timeout: float = 60
    settle: float | None = None

    def __call__(self, c: Ctx) -> None:
        c.wait_text(_text(self.text, c), self.timeout)
        if self.settle is not None:
            c.rec.settle(self.settle, timeout=10)


@dataclass
class ByRelease:
    """Release differences inside a scenario, as data: {release: steps}, run the steps of the
    newest release listed that is not newer than the one driven (`Release.pick`)."""
    table: dict

    def __call__(self, c: Ctx) -> None:
        run_steps(c, c.release.pick(self.table))


def run_steps(c: Ctx, steps) -> None:
    """Run a scenario: each step called with `c`, nested lists in place."""
    for step in steps:
        if isinstance(step, (list, tuple)):
            run_steps(c, step)
        else:
            step(c)


def turn(text, suffix: str, kind: str, how, wait: str | None = None) -> list:
    """A prompt turn: prompt, (wait for `wait`), idle, shot."""
    return [Prompt(text, wait), Idle(suffix, kind, how)]


def ask(text, suffix: str, kind: str, how, answer: tuple = (), needle=None) -> list:
    """A prompt that brings a dialog: prompt, dialog, shot, answer."""
    return [Prompt(text), Dialog(suffix, kind, how, answer, needle)]


# -- steps many session scripts share -------------------------------------------------------------
# `c` is a driver's Ctx with `prompt`, `wait_working`, `wait_idle`; the mock_openai.py prompts.
DELAYED_REPLY = [
    # the mock holds the first token: working all through the wait, idle once the reply came
    Prompt("please ponder whether the API needs pagination"),
    Working("working-before-first-token", "waiting-first-token", "6 s into the wait for the first token",
            delay=6),
    Idle("idle-after-delayed-reply", "after-reply", "the delayed reply arrived", timeout=60),
]


def streaming_steps(prompt: str, how) -> list:
    """A slow streamed reply, shot 3 s after its first words."""
    return [Prompt(prompt, wait="careful walk-through"),
            Working("working-streaming", "streaming", how, wait=False)]


STREAMED_REPLY = [
    # a slow streamed reply shot while it streams, then once it finished
    streaming_steps("walk me through the scheduler slowly", "slow streamed reply, 3 s in"),
    Idle("idle-after-reply", "after-reply", "the slow reply finished", timeout=60),
]


def interrupted_stream_steps(*ks: str) -> list:
    """A slow streamed reply, then `ks` (the agent's interrupt) while it streams."""
    said = " ".join("Esc" if k == "Escape" else k for k in ks)
    return [streaming_steps("explain the token refresh flow in detail",
                            lambda c: f"slow streamed reply ({c.s.cols} columns)"),
            Keys(ks),
            Idle("idle-after-interrupt-stream", "after-interrupt", f"{said} while the reply streamed")]


# the same as functions (the drivers written before the steps call these)
def delayed_reply(c: Ctx) -> None:
    run_steps(c, DELAYED_REPLY)


def streaming(c: Ctx, prompt: str, how: str) -> None:
    run_steps(c, streaming_steps(prompt, how))


def streamed_reply(c: Ctx) -> None:
    run_steps(c, STREAMED_REPLY)


def interrupted_stream(c: Ctx, *keys: str) -> None:
    run_steps(c, interrupted_stream_steps(*keys))


class TitleCtx(Ctx):
    """A Ctx whose wait predicates get (screen, title)."""

    def probe(self) -> tuple[tuple, str, str]:
        scr, title = self.rec.screen(), self.rec.title()
        return (scr, title), scr, f"; title={title!r}"


def run_session(sess, ctx_factory: Callable[[Recording], Ctx], script: Callable[[Ctx], None], *,
                base: Path, home: Path, cmd: list[str], env: dict[str, str], cwd: Path) -> list[str]:
    """Run one session's script against the agent in a fresh recording; whatever happens, close
    the tmux server and reap HOME. A failure is printed and kept in base/error.txt (the other
    sessions go on). Returns the fixture names made."""
    if not callable(script):  # a scenario as data
        steps = script
        script = lambda c: run_steps(c, steps)  # noqa: E731
    print(f"== session {sess.name} ({sess.cols}x{sess.rows}) home={home}", flush=True)
    rec = Recording(base / "rec", cmd, rows=sess.rows, cols=sess.cols, env=env, cwd=cwd)
    ctx = ctx_factory(rec)
    try:
        script(ctx)
    except Exception as e:  # keep the other sessions going; the error is in the report
        print(f"!! session {sess.name} failed: {e}", flush=True)
        (base / "error.txt").write_text(str(e))
    finally:
        rec.close()
        reap(home)
    return ctx.made


def capture(only: str | None, *, agent: str, sessions: list, out: Path, bin_: Path,
            install: Callable[[], None], start_mock: Callable[[Path], Mock],
            run: Callable[[object, Mock, str | None, dict], list[str]], title: str) -> None:
    """Run the sessions (`--only`: a session name, or a fixture name whose session runs) against
    one mock, merging each session's entries into out/index.toml as it ends."""
    if not bin_.exists():
        install()
    out.mkdir(parents=True, exist_ok=True)
    logs = AGENTS / f"{agent}-logs"
    logs.mkdir(parents=True, exist_ok=True)
    mock = start_mock(logs / f"mock-{int(time.time())}.jsonl")
    print(f"mock on port {mock.port}, log {mock.log}", flush=True)
    index = load_index(out)
    try:
        for sess in sessions:
            if only and only != sess.name and not only.startswith(f"{sess.cols}x{sess.rows}-"):
                continue
            run(sess, mock, only, index)
            write_merged_index(out, index, title)
    finally:
        mock.close()


def npm_main(doc: str, release: Release, sessions: list, run: Callable, *, name: str,
             start_mock: Callable[[Path], Mock]) -> None:
    """main() for a driver of one NpmRelease: install / capture / list, `--version` / `--out`."""
    r = release
    title = f"# Real {name} captures; written by harness/{r.agent}.py (do not edit by hand)."
    main(doc, install=r.install, sessions=sessions, configure=r.configure,
         capture=lambda only: capture(only, agent=r.agent, sessions=sessions, out=r.out, bin_=r.bin,
                                      install=r.install, run=run, start_mock=start_mock, title=title))


@dataclass
class Driver:
    """One capture driver as data: the release, the Ctx class, the sessions, the mock, and how
    a session's agent starts (`setup(d, sess, home, proj, mock)` makes HOME and the project;
    `env(sess, home, proj, mock)` the agent's own variables, over tmux_env(); `cmd(sess, proj)`
    its command line, default the release's binary). `main()` is the drivers' CLI."""
    release: Release
    name: str                               # "Factory Droid": the index's title
    doc: str
    ctx: type
    sessions: list
    mock: Callable[[Path], Mock]
    env: Callable[..., dict] = lambda sess, home, proj, mock: {"HOME": str(home)}
    setup: Callable[..., None] | None = None
    cmd: Callable[..., list] | None = None
    describe: Callable[[object], str] = lambda s: f"{s.name:12s} {s.cols}x{s.rows}"
    plan: Callable[[list], list] = lambda ss: ss   # the sessions the release driven runs

    def dirs(self, sess) -> tuple[Path, Path, Path]:
        return session_dirs(self.release.agent, sess)

    def run_session(self, sess, mock: Mock, only: str | None, index: dict) -> list[str]:
        base, home, proj = self.dirs(sess)
        if self.setup:
            self.setup(self, sess, home, proj, mock)
        else:
            home.mkdir(parents=True)
            demo_project(proj)
        env = {**tmux_env(), **self.env(sess, home, proj, mock)}   # the agent's own win (PATH)
        cmd = self.cmd(sess, proj) if self.cmd else [str(self.release.bin)]

        def make(rec: Recording) -> Ctx:
            c = self.ctx(sess, rec, only, index)
            c.proj, c.mock = proj, mock
            return c
        return run_session(sess, make, sess.run, base=base, home=home, cmd=cmd, env=env, cwd=proj)

    def main(self) -> None:
        r = self.release
        title = f"# Real {self.name} captures; written by harness/{r.agent}.py (do not edit by hand)."
        main(self.doc, install=r.install, sessions=self.sessions, configure=r.configure,
             describe=self.describe,
             capture=lambda only: capture(only, agent=r.agent, sessions=self.plan(self.sessions),
                                          out=r.out, bin_=r.bin, install=r.install, run=self.run_session,
                                          start_mock=self.mock, title=title))


def home_config(rel: str, text: Callable[[int], str], project: dict[str, str] | None = None) -> Callable:
    """A Driver's `setup` for an agent configured by one file: HOME/`rel` holding `text(mock
    port)`, then the demo project (plus `project`: {file name: text})."""
    def setup(d: Driver, sess, home: Path, proj: Path, mock: Mock) -> None:
        path = home / rel
        path.parent.mkdir(parents=True)
        path.write_text(text(mock.port))
        demo_project(proj)
        for name, body in (project or {}).items():
            (proj / name).write_text(body)
    return setup


def openai_mock(slow: float = 20, delay: float = 20) -> Callable[[Path], Mock]:
    """The usual mock: harness/mock_openai.py with these slow-stream / first-token delays."""
    return lambda log: Mock("mock_openai.py", log, slow=slow, delay=delay)


def release_out(agent: str, version: str) -> Path:
    """Where the fixtures of a release other than the pinned one go: `fixtures/<agent>/<version>/`
    (the pinned release's stay in `fixtures/<agent>/`; `core/fixtures.py` reads both)."""
    return REPO / "fixtures" / agent / version


def main(doc: str, *, install: Callable[[], None], capture: Callable[[str | None], None],
         sessions: list, describe: Callable[[object], str] = lambda s: f"{s.name:12s} {s.cols}x{s.rows}",
         configure: Callable[[str | None, Path | None], None] | None = None) -> None:
    """The drivers' CLI: install | capture [--only NAME] | list (one `describe(session)` a line).

    `--version V` (install, capture) runs another release than the driver's pinned one, its
    fixtures in `release_out(agent, V)` unless `--out DIR`; the driver's `configure(version,
    out)` points its paths there before anything runs."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("install")
    c = sub.add_parser("capture")
    c.add_argument("--only", help="a session name or a fixture name")
    for p in (i, c):
        p.add_argument("--version", help="another release than the pinned one")
        p.add_argument("--out", type=Path, help="write the fixtures here")
    sub.add_parser("list")
    a = ap.parse_args()
    if getattr(a, "version", None) or getattr(a, "out", None):
        if configure is None:
            ap.error("this driver runs its pinned release only")
        configure(a.version, a.out)
    if a.cmd == "install":
        install()
    elif a.cmd == "capture":
        capture(a.only)
    else:
        for s in sessions:
            print(describe(s))
