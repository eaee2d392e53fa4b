"""What a sidecar runs from, and whether that install changed under it.

A TPM update (`prefix + U`) rebuilds the plugin's venv under a running sidecar; pip or pipx
reinstall the package over it. The running process keeps its old code in memory while the
files it would still import are deleted or replaced: it must not go on as if nothing happened.
At start the sidecar records its install: the interpreter, the venv, the package's folder and
the identity of its dist-info's RECORD (pip writes RECORD last, after every file of the
package, so a new RECORD means a complete new install). Every few seconds one stat of RECORD
(and of the interpreter) says whether it is still the same; when it is not, `InstallWatch`
waits until the new install is complete (`plugin/ensure`'s lock gone, RECORD there and the
same over two checks, its interpreter imports the sidecar) and names the interpreter to hand
over to.
"""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

log = logging.getLogger("tmux_agentstate.sidecar")

CHECK_EVERY = 3.0     # seconds between two looks at the install (one or two stats)
SETTLE_EVERY = 1.0    # ...once it changed: until the new install is complete and still
HEARTBEAT = 5.0       # the status file is written at least this often: `doctor` takes one
                      # much older than that for a frozen sidecar
RETRY_AFTER = 30.0    # after a new install that does not import: look again this much later
DIST = "tmux_agentstate"  # the dist-info folder's name prefix (tmux-agentstate, normalised)


@dataclass(frozen=True)
class Install:
    python: str    # the interpreter (sys.executable)
    prefix: str    # its environment (sys.prefix): the plugin's venv, pipx's, ...
    package: str   # the tmux_agentstate package folder
    record: str    # the dist-info's RECORD ("" when not installed as a distribution)
    stamp: str     # RECORD's identity (inode, mtime, size); "" when there is none

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> "Install | None":
        try:
            return cls(**{k: str(data[k]) for k in cls.__dataclass_fields__})
        except (KeyError, TypeError):
            return None


def file_stamp(path: str) -> str | None:
    """A file's identity: a rewrite or a replacement changes it; None when it is gone."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_ino}-{st.st_mtime_ns}-{st.st_size}"


def find_record(site: Path) -> str:
    """The RECORD of our distribution in one site-packages folder ("" if none)."""
    try:
        found = sorted(site.glob(f"{DIST}-*.dist-info/RECORD"))
    except OSError:
        return ""
    return str(found[-1]) if found else ""


def current() -> Install:
    """The install this process runs from."""
    import tmux_agentstate
    package = str(Path(tmux_agentstate.__file__).resolve().parent)
    record = ""
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        try:
            path = getattr(distribution("tmux-agentstate"), "_path", None)
        except PackageNotFoundError:
            path = None
        if path is not None and (Path(path) / "RECORD").exists():
            record = str(Path(path) / "RECORD")
    except ImportError:
        pass
    return Install(sys.executable, sys.prefix, package, record, file_stamp(record) or "")


def python_gone(install: Install) -> bool:
    """Its interpreter was deleted (one that never said its path is taken as there)."""
    return bool(install.python) and not os.path.exists(install.python)


def changed(install: Install) -> str | None:
    """Why `install` is no longer what is on disk (None: it still is): for `doctor`, about
    the install a sidecar's status names."""
    if python_gone(install):
        return f"its interpreter {install.python} is gone"
    if install.record and file_stamp(install.record) != install.stamp:
        return f"its package was reinstalled or removed ({Path(install.record).parent.name})"
    return None


def installing(prefix: str) -> bool:
    """`plugin/ensure` is (re)building this venv now: its lock folder is beside it."""
    return os.path.isdir(prefix.rstrip("/") + ".installing")


def imports_sidecar(python: str) -> bool:
    """Whether `python` runs our sidecar (a half-built or broken install does not)."""
    try:
        done = subprocess.run([python, "-c", "import tmux_agentstate.sidecar.loop"], cwd="/",
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


class InstallWatch:
    """Looks at the install now and then (`check`); says when to hand over, and to what."""

    def __init__(self, install: Install, runtime_dir: Path, every: float = CHECK_EVERY):
        self.install = install
        self.runtime_dir = runtime_dir
        self.every = every
        self._next = time.monotonic() + every
        self._seen: tuple | None = None   # what the last look saw of a changed install
        self._said = ""                    # the last thing logged (each said once)
        self._verified: tuple | None = None  # the new install that imports
        self._failed: tuple | None = None  # a new install that did not import...
        self._retry_at = 0.0               # ...tried again after this (or when it changes)

    def _say(self, text: str) -> None:
        if text != self._said:
            log.info("install: %s", text)
            self._said = text

    @property
    def changing(self) -> bool:
        """Our install differs from what we started with now (one stat): its files, our
        bundled manifests among them, are being deleted or replaced under us."""
        ours = self.install
        return bool(ours.record) and (file_stamp(ours.record) != ours.stamp
                                      or python_gone(ours))

    def check(self, now: float | None = None) -> str | None:
        """The interpreter of a new, complete install to hand over to; None: go on."""
        now = time.monotonic() if now is None else now
        if now < self._next or not self.install.record:
            return None  # not installed as a distribution (a source checkout): nothing to watch
        self._next = now + self.every
        ours = self.install
        if file_stamp(ours.record) == ours.stamp and not python_gone(ours):
            self._seen = None
            return None
        self._next = now + min(self.every, SETTLE_EVERY)  # changed: follow it more closely
        if installing(ours.prefix):
            self._say(f"{ours.prefix} is being rebuilt; watching with the old code until it is done")
            self._seen = None
            return None
        python = ours.python if ours.python and os.access(ours.python, os.X_OK) \
            else self._named_python()
        if python is None:
            self._say(f"{ours.package} is gone and no new install is known; watching with the "
                      "old code until a start replaces this sidecar")
            return None
        record = find_record(Path(ours.record).parent.parent) if python == ours.python else ""
        seen = (python, record, file_stamp(record), file_stamp(python))
        if python == ours.python and not record:
            self._say("the package is being reinstalled; waiting for it to complete")
            self._seen = None
            return None
        if seen != self._seen:  # still changing (pip writing): the same twice, then it is done
            self._seen = seen
            return None
        if seen == self._failed and now < self._retry_at:
            return None  # that install did not import: another one, or later
        if seen == self._verified:
            return python  # checked already: the hand-over waits for the start lock
        if not imports_sidecar(python):
            self._say(f"the new install at {python} does not import; watching with the old "
                      "code until one does")
            self._failed, self._retry_at = seen, now + RETRY_AFTER
            return None
        log.info("install changed under this sidecar (%s); handing over to %s",
                 changed(ours) or "replaced", python)
        self._verified = seen
        return python

    def _named_python(self) -> str | None:
        """The interpreter the last `start` ran with (the plugin's new venv, say), if it is
        another one than ours and still there."""
        try:
            named = (self.runtime_dir / "python").read_text().strip()
        except OSError:
            return None
        if named and named != self.install.python and os.access(named, os.X_OK):
            return named
        return None


def hand_over(runtime, python: str, argv: list[str], timeout: float = 10.0) -> int | None:
    """Start the sidecar of the new install (`python`, our own arguments) and wait until it
    holds the single-instance lock: its pid, or None when it did not come. The caller holds
    the start lock (no hook's `start` comes between) and has let go of the sidecar lock."""
    args = list(argv)
    if "--quiet" not in args:
        args.insert(1 if args[:1] == ["watch"] else 0, "--quiet")
    with open(runtime.dir / "sidecar.out", "ab") as out:
        # cwd /: `-m` looks in the cwd first, and no folder there may shadow the package
        proc = subprocess.Popen([python, "-m", "tmux_agentstate", *args], cwd="/",
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True, close_fds=True)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = runtime.running_pid()
        if pid and pid > 0 and pid != os.getpid():  # -1: a lock a full disk left unnamed
            return pid
        if proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


class HandOver:
    """What a sidecar does about its own install: watch it (InstallWatch), say when to hand
    over (the install changed and is complete, and no `start` runs), hand over, and the
    status fields `doctor` compares."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.watch = InstallWatch(current(), runtime.dir)
        self.started = time.time()
        self._next_status = 0.0  # the status file is the sidecar's heartbeat too

    @property
    def changing(self) -> bool:
        return self.watch.changing

    def due(self, now: float, stopping) -> str | None:
        """The new install's interpreter when it is time to hand over to it, holding the start
        lock (kept until the new sidecar holds its own: no hook counts it as a crash)."""
        python = self.watch.check(now)
        if python and self.runtime.try_start_lock(0.5, give_up=stopping):
            return python
        return None

    def status_due(self, now: float) -> bool:
        """Whether the status file is due as a heartbeat (at least every HEARTBEAT)."""
        if now < self._next_status:
            return False
        self._next_status = now + HEARTBEAT
        return True

    def status(self, period: float) -> dict:
        """For `doctor`: what this sidecar runs from, since when, how often it writes."""
        return {"install": self.watch.install.as_dict(), "started": self.started,
                "heartbeat": max(HEARTBEAT, period)}

    def run(self, sidecar, python: str) -> None:
        """Start the new install's sidecar and let this one end. Our verdicts stay on the panes
        until the new one publishes its own (no gap); were it not to start, they go (no dead
        watcher's verdict stands)."""
        from ..tmux import Batch, TmuxError
        withdraw = Batch()
        sidecar.publish.withdraw(list(sidecar.panes.values()), withdraw)
        sidecar.shutdown(withdraw=False)
        self.runtime.release()
        try:
            pid = hand_over(self.runtime, python, sys.argv[1:])
        except OSError:  # the new interpreter went between its check and now, say
            pid = None
        if pid:
            log.info("handed over to pid %d (%s)", pid, python)
            return
        log.error("the new install's sidecar (%s) did not start, see %s; withdrawing this "
                  "one's verdicts", python, self.runtime.dir / "sidecar.out")
        sidecar.tmux.control = None  # closed: no new control client for the last commands
        try:
            sidecar.tmux.apply(withdraw)
        except TmuxError:
            pass
