"""What the per-agent capture drivers in this folder share.

- Paths: HERE (this folder), REPO, AGENTS (where the agents, their throwaway homes and the logs
  live: $AGENTSTATE_AGENTS_DIR or /work/agents).
- The fixture index (`fixtures/<agent>/index.toml`): load_index, write_index, write_merged_index.
- Process hygiene: pids_naming / kill_pids / reap (by PID, never by process name: other agents
  run on this machine).
- Mock: one mock model server (harness/mock_*.py) on a free port.
- NpmRelease / PipRelease: an npm (PyPI) agent's prefix (venv), binary and fixture folder at one
  release; Session, session_dirs, demo_project: the newer drivers' session shape, throwaway dirs and git project.
- Ctx: what a session script gets (the recording, waits on tmux's own view, `shot`).
- run_session / capture / main: the per-session plumbing and the install/capture/list CLI of the
  drivers that take `--only NAME` (all but claude.py, which has its own).

Agent-specific logic (how to set up HOME, what "idle" looks like, the session scripts) stays in
each driver. Nothing in the package imports this.
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
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for p in pids:
            try:
                os.kill(p, sig)
                alive.append(p)
            except ProcessLookupError:
                pass
        if not alive:
            return
        time.sleep(0.7)
        pids = [p for p in alive if Path(f"/proc/{p}").exists()]


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


class NpmRelease:
    """One agent CLI from npm at one release: its install prefix, its binary and its fixture
    folder. `configure(version, out)` (the drivers' `--version V` / `--out DIR`) repoints all
    three; the pinned release keeps `fixtures/<agent>/`. A driver's Ctx names it as `release`."""

    def __init__(self, agent: str, package: str, bin_name: str, pinned: str):
        self.agent, self.package, self.bin_name, self.pinned = agent, package, bin_name, pinned
        self.version = pinned
        self.configure(None, None)

    def configure(self, version: str | None, out: Path | None) -> None:
        self.version = version or self.version
        self.prefix = AGENTS / f"{self.agent}-{self.version}"
        self.bin = self.prefix / "node_modules" / ".bin" / self.bin_name
        self.out = out.resolve() if out else (REPO / "fixtures" / self.agent if self.version == self.pinned
                                              else release_out(self.agent, self.version))

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


class PipRelease(NpmRelease):
    """One agent CLI from PyPI at one release, in its own venv `AGENTS/<agent>-<version>` made by
    `python` (a name on PATH such as "python3.13", for a CLI that needs a newer Python than
    ours). The same paths and `configure` as NpmRelease; the binary is the venv's `bin/<name>`."""

    def __init__(self, agent: str, package: str, bin_name: str, pinned: str, python: str = sys.executable):
        self.python = python
        super().__init__(agent, package, bin_name, pinned)

    def configure(self, version: str | None, out: Path | None) -> None:
        super().configure(version, out)
        self.bin = self.prefix / "bin" / self.bin_name

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
    release: NpmRelease | None = None   # if set, version and out are read from it
    settle: float | None = 0.6
    key_pause = 0.35
    columns = (44, 24, 7)

    def __init__(self, sess, rec: Recording, only: str | None, index: dict):
        self.s, self.rec, self.only, self.index = sess, rec, only, index
        if self.release is not None:  # configured after the class was defined
            self.agent, self.version, self.out = self.release.agent, self.release.version, self.release.out
        self.made: list[str] = []

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


# -- steps many session scripts share -------------------------------------------------------------
# `c` is a driver's Ctx with `prompt`, `wait_working`, `wait_idle`; the mock_openai.py prompts.
def delayed_reply(c: Ctx) -> None:
    """The mock holds the first token: working all through the wait, idle once the reply came."""
    c.prompt("please ponder whether the API needs pagination")
    c.wait_working()
    time.sleep(6)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "6 s into the wait for the first token", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-delayed-reply", "idle", "after-reply", "the delayed reply arrived")


def streaming(c: Ctx, prompt: str, how: str) -> None:
    """A slow streamed reply, shot 3 s after its first words."""
    c.prompt(prompt)
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.shot("working-streaming", "working", "streaming", how, settle=None)


def streamed_reply(c: Ctx) -> None:
    """A slow streamed reply shot while it streams, then once it finished."""
    streaming(c, "walk me through the scheduler slowly", "slow streamed reply, 3 s in")
    c.wait_idle(timeout=60)
    c.shot("idle-after-reply", "idle", "after-reply", "the slow reply finished")


def interrupted_stream(c: Ctx, *keys: str) -> None:
    """A slow streamed reply, then `keys` (the agent's interrupt) while it streams."""
    streaming(c, "explain the token refresh flow in detail", f"slow streamed reply ({c.s.cols} columns)")
    c.key(*keys)
    c.wait_idle()
    said = " ".join("Esc" if k == "Escape" else k for k in keys)
    c.shot("idle-after-interrupt-stream", "idle", "after-interrupt", f"{said} while the reply streamed")


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


def npm_main(doc: str, release: NpmRelease, sessions: list, run: Callable, *, name: str,
             start_mock: Callable[[Path], Mock]) -> None:
    """main() for a driver of one NpmRelease: install / capture / list, `--version` / `--out`."""
    r = release
    title = f"# Real {name} captures; written by harness/{r.agent}.py (do not edit by hand)."
    main(doc, install=r.install, sessions=sessions, configure=r.configure,
         capture=lambda only: capture(only, agent=r.agent, sessions=sessions, out=r.out, bin_=r.bin,
                                      install=r.install, run=run, start_mock=start_mock, title=title))


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
