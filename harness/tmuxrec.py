"""Record a real agent CLI's raw pane bytes in a private tmux server.

A fixture is the pane's byte stream from the agent's very first byte up to the moment the
screen shows the state we want: replaying the whole prefix into an emulated screen gives that
screen back (the alternate screen, the title, everything). So a recording starts `pipe-pane`
*before* the agent runs: the pane's command waits for a go-file, we attach the pipe, then
create the go-file and the agent starts writing into an open pipe.

Used by the per-agent drivers in this folder; nothing in the package imports it.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path


class Recording:
    """One agent running in one pane of a private tmux server, its bytes piped to a file."""

    def __init__(self, workdir: Path, command: list[str], *, rows: int, cols: int,
                 env: dict[str, str] | None = None, cwd: Path | None = None,
                 socket_name: str | None = None, stamped: bool = False):
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.raw = self.workdir / "pane.raw"
        self.raw.write_bytes(b"")
        # stamped: also keep each chunk's arrival time (harness/stamppipe.py) in pane.times
        self.times = self.workdir / "pane.times" if stamped else None
        if self.times:
            self.times.write_text("")
        self.rows, self.cols = rows, cols
        self.socket = socket_name or f"agentstate-rec-{os.getpid()}-{int(time.time() * 1000) % 100000}"
        go = self.workdir / "go"
        if go.exists():
            go.unlink()
        exports = " ".join(f"export {k}={shlex.quote(v)};" for k, v in (env or {}).items())
        inner = (f"{exports} cd {shlex.quote(str(cwd or self.workdir))}; "
                 f"while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.02; done; "
                 f"exec {shlex.join(command)}")
        self.tmux("-f", "/dev/null", "new-session", "-d", "-s", "rec", "-x", str(cols), "-y", str(rows),
                  "bash", "--norc", "--noprofile", "-c", inner)
        self.tmux("set-option", "-g", "remain-on-exit", "on")
        self.pane = self.tmux("display-message", "-p", "-t", "rec", "#{pane_id}").strip()
        self.tmux("resize-window", "-t", "rec", "-x", str(cols), "-y", str(rows))
        pipe = f"cat >> {shlex.quote(str(self.raw))}"
        if self.times:
            reader = Path(__file__).resolve().with_name("stamppipe.py")
            pipe = shlex.join([sys.executable, str(reader), str(self.raw), str(self.times)])
        self.tmux("pipe-pane", "-O", "-t", self.pane, pipe)
        time.sleep(0.2)
        go.touch()

    # -- tmux ---------------------------------------------------------------------------------
    def tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def screen(self) -> str:
        """tmux's own rendering of the visible pane (the ground truth to wait on)."""
        return self.tmux("capture-pane", "-p", "-t", self.pane)

    def title(self) -> str:
        return self.tmux("display-message", "-p", "-t", self.pane, "#{pane_title}")

    def send(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", self.pane, *(["-l"] if literal else []), *keys)

    def type(self, text: str, enter: bool = True, delay: float = 0.02) -> None:
        """Type like a person: a character at a time (some TUIs drop pasted bursts)."""
        for ch in text:
            # a lone ';' argument is tmux's command separator: escape it
            self.send("\\;" if ch == ";" else ch, literal=True)
            time.sleep(delay)
        if enter:
            time.sleep(0.3)
            self.send("Enter")

    # -- waiting ------------------------------------------------------------------------------
    def wait_for(self, needle: str, timeout: float = 60.0, *, absent: bool = False) -> str:
        """Wait until `needle` (a plain substring) is on (or gone from) tmux's screen."""
        deadline = time.time() + timeout
        while True:
            scr = self.screen()
            if (needle in scr) != absent:
                return scr
            if time.time() > deadline:
                raise TimeoutError(f"{'still' if absent else 'never'} saw {needle!r}; screen:\n{scr}")
            time.sleep(0.1)

    def settle(self, quiet: float = 0.4, timeout: float = 10.0) -> None:
        """Wait until the piped file stops growing for `quiet` seconds (or timeout)."""
        deadline = time.time() + timeout
        last, since = -1, time.time()
        while time.time() < deadline:
            size = self.raw.stat().st_size
            if size != last:
                last, since = size, time.time()
            elif time.time() - since >= quiet:
                return
            time.sleep(0.05)

    def snapshot(self, dest: Path, *, settle: float | None = 0.4) -> dict:
        """Copy the bytes so far to `dest`; returns facts for the fixture index."""
        if settle:
            self.settle(settle)
        else:
            time.sleep(0.15)  # let `cat` flush what tmux already handed it
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.raw, dest)
        scr = self.screen()
        return {"bytes": dest.stat().st_size, "tmux_screen": scr, "title": self.title()}

    def snapshot_quiet(self, dest: Path, *, settle: float | None = 0.4) -> dict:
        """`snapshot`, but with tmux's screen for exactly the copied prefix.

        A settled shot waits for the stream to go quiet (`snapshot`). A working screen never
        goes quiet (spinners redraw every 80 ms), and copying the bytes and then asking tmux for
        its screen can straddle a redraw (the .screen.txt then shows the next spinner frame).
        So: wait for a >=40 ms window in which the piped file does not grow around
        capture-pane, and keep exactly the bytes seen in that window."""
        if settle:
            return self.snapshot(dest, settle=settle)
        dest.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(100):
            n0 = self.raw.stat().st_size
            scr = self.screen()
            time.sleep(0.04)
            if self.raw.stat().st_size == n0:
                dest.write_bytes(self.raw.read_bytes()[:n0])
                return {"bytes": n0, "tmux_screen": scr, "title": self.title()}
            time.sleep(0.013)
        raise TimeoutError(f"no quiet 40 ms window to snapshot {dest.name}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
