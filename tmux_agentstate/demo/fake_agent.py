"""A fake coding agent that draws like Claude Code, for the `demo` command, benchmarks and tests.

    python -m tmux_agentstate.demo.fake_agent [--autopilot] [--seed N] [--speed F] [--tasks N] [--alt]

It copies the terminal habits that make Claude Code hard to read from outside:
- no `\\n` byte, ever: each row starts with `\\r` (+ `CSI n C` indent) + cursor-down `CSI 1 B`
  (`CSI 1 S`, scroll up, when the cursor is already on the bottom row), and the words of a row
  are placed with `CSI n G`, so the gap between two words is an untouched cell;
- Ink-style rendering: finished output ("static") is written once; the live part at the bottom
  (spinner, input box, permission dialog) is erased with cursor-up + `CSI J` and redrawn;
- a spinner row `✻ Pondering… (3s · esc to interrupt)` redrawn with `\\r` about 10 times a
  second (one ~70-byte write per frame) above the input box and its `? for shortcuts` footer;
- tool calls that print nothing at all while they run (0.5-6 s);
- a permission dialog in Claude's words (`Bash command`, `Do you want to proceed?`,
  `❯ 1. Yes`, …, footer `Esc to cancel · Tab to amend`), erased once answered;
- replies that sometimes end with "Would you like me to add a regression test?", a question in
  an ordinary reply that stays on screen into the next task (not a prompt);
- the title `OSC 0 ✳ Claude Code` once at start.

Modes: interactive (keys from the tty in raw mode: at the idle prompt type a task + Enter; at a
permission dialog `1`/Enter approves, `2` approves "always", `3`/Esc rejects, ↑/↓ move the
selection; Esc or Ctrl-C while working interrupts; Ctrl-C or Ctrl-D at an empty prompt quits)
and `--autopilot`, where it plays the user itself: it answers a dialog 3-8 s after it appears
and types the next task 3-10 s after a turn ends. `--speed F` divides every delay by F.

Ground truth for benchmarks: with `AGENTSTATE_TRUTH_FILE=<path>` it appends
`<unix time, ms> <working|idle|blocked>` every time its true state changes, right after the bytes
that draw that state were written to the terminal. With `AGENTSTATE_TRACE_FILE=<path>` it also
appends `<unix time> <bytes written so far> <state> <what>` after every single write, so a
recording of its output can be cut at exactly the points where the screen is complete.

SIGTERM, SIGHUP, SIGINT and a vanished terminal end it cleanly (the tty modes are restored);
SIGWINCH redraws at the new size.
"""
from __future__ import annotations

import argparse
import os
import random
import select
import sys
import time

from .drawing import Drawing
from .material import LOOKS, RESET, TITLE, Quit
from .script import Script
from .terminal import Terminal


class FakeAgent(Drawing, Script, Terminal):
    def __init__(self, *, autopilot: bool = False, seed: int | None = None, speed: float = 1.0,
                 tasks: int = 0, alt: bool = False, look: str = "current", in_fd: int | None = 0, out_fd: int = 1,
                 truth_path: str | None = None, trace_path: str | None = None):
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "big")
        self.rng = random.Random(f"agent-{seed}")      # what the agent does
        self.user_rng = random.Random(f"user-{seed}")  # what the autopilot user does
        self.autopilot = autopilot
        self.speed = speed if speed > 0 else 1.0
        self.max_tasks = max(0, tasks)
        self.alt = alt
        self.look = look if look in LOOKS else "current"
        self.in_fd = in_fd
        self.out_fd = out_fd
        self.truth_path = truth_path
        self.trace_path = trace_path
        self.rows, self.cols = 24, 80
        # screen model
        self.y = 0            # cursor row
        self.fresh = True     # cursor at column 0 of an empty row: the next row is written here
        self.dyn_count = 0    # rows of the live region now on screen (cursor on its last row)
        self.dyn_builder = None
        self.static: list[tuple[str, str | None]] = []  # logical lines, for a redraw on resize
        # agent state
        self.state: str | None = None
        self.written = 0
        self.mode = "idle"    # idle | task | ask
        self.task = None      # the running task generator
        self.wake: float | None = None
        self.spinning = False
        self.spin_next = 0.0
        self.spin_frame = 0
        self.spin_start = 0.0
        self.verb = "Pondering"
        self.input = ""
        self.partial = ""     # reply text being streamed (live region)
        self.tool_live: list[tuple[str, str | None]] = []  # tool rows shown while it runs
        self.ask: dict | None = None
        self.tasks_started = 0
        # autopilot
        self.ap_at: float | None = None
        self.ap_typing: str | None = None
        # plumbing
        self.quit = False
        self.winch = False
        self.saved_tty = None
        self.wake_r = self.wake_w = None
        self.esc_pending = b""

    # -- delays ------------------------------------------------------------------------------------
    def d(self, seconds: float) -> float:
        return seconds / self.speed

    @property
    def spin_interval(self) -> float:
        return max(0.02, self.d(0.1))

    # -- output ------------------------------------------------------------------------------------
    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.out_fd, view)
            except InterruptedError:
                continue
            except BlockingIOError:
                select.select([], [self.out_fd], [], 1.0)
                continue
            except OSError as e:  # EIO / EPIPE: the terminal is gone
                self.quit = True
                raise Quit() from e
            view = view[n:]
            self.written += n

    def emit(self, text: str, what: str, state: str | None = None) -> None:
        """Write one frame; then, if `state` differs, record the new true state."""
        if text:
            self._write_all(text.encode("utf-8", "replace"))
        now = time.time()
        if state is not None and state != self.state:
            self.state = state
            self._append(self.truth_path, f"{now:.3f} {state}\n")
        if text or state is not None:
            self._append(self.trace_path, f"{now:.3f} {self.written} {self.state} {what}\n")

    @staticmethod
    def _append(path: str | None, line: str) -> None:
        if not path:
            return
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(line)
        except OSError:
            pass

    # -- the screen model --------------------------------------------------------------------------
    def next_deadline(self) -> float:
        deadlines = [time.monotonic() + 1.0]
        if self.spinning and self.mode == "task":
            deadlines.append(self.spin_next)
        if self.wake is not None and self.mode == "task":
            deadlines.append(self.wake)
        if self.ap_at is not None:
            deadlines.append(self.ap_at)
        return min(deadlines)

    def tick(self, now: float) -> None:
        if self.mode == "task" and self.spinning and now >= self.spin_next:
            self.spin_frame += 1
            self.redraw_row("spinner", "spinner")
            self.spin_next = max(self.spin_next + self.spin_interval, now + self.spin_interval / 2)
        if self.mode == "task" and self.wake is not None and now >= self.wake:
            self.wake = None
            self.advance()
        if self.autopilot:
            self.autopilot_step(now)

    def run(self) -> int:
        old_signals = self.install_signals()
        self.setup_tty()
        self.query_size()
        try:
            head = ("\x1b[?1049h" if self.alt else "") + "\x1b[?25l" + f"\x1b]0;{TITLE}\x07" + \
                   "\x1b[H\x1b[2J"
            self.emit(head, "start")
            self.render(self.banner(), self.idle_layout, "idle", "idle")
            self.schedule_next_task(first=True)
            while not self.quit:
                timeout = max(0.0, self.next_deadline() - time.monotonic())
                fds = [self.wake_r] + ([self.in_fd] if self.in_fd is not None else [])
                try:
                    ready, _, _ = select.select(fds, [], [], timeout)
                except (OSError, ValueError):
                    ready = []
                    if self.in_fd is not None:
                        self.in_fd = None
                if self.wake_r in ready:
                    try:
                        while os.read(self.wake_r, 512):
                            pass
                    except OSError:
                        pass
                if self.quit:
                    break
                if self.winch:
                    self.winch = False
                    self.query_size()
                    self.full_redraw()
                if self.in_fd is not None and self.in_fd in ready:
                    try:
                        data = os.read(self.in_fd, 4096)
                    except (BlockingIOError, InterruptedError):
                        data = None
                    except OSError:
                        data = b""
                    if data == b"":
                        self.in_fd = None
                        if not self.autopilot:
                            self.quit = True
                            break
                    elif data:
                        self.on_bytes(data)
                if not self.quit:
                    self.tick(time.monotonic())
        except Quit:
            pass
        finally:
            self.restore_tty()
            try:
                tail = self._erase() + RESET + "\x1b[?25h" + ("\x1b[?1049l" if self.alt else "")
                self._write_all(tail.encode())
                self._append(self.trace_path, f"{time.time():.3f} {self.written} exit exit\n")
            except Quit:
                pass
            self.restore_signals(old_signals)
        return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tmux_agentstate.demo.fake_agent",
        description="A fake coding agent that draws like Claude Code (working / idle / blocked).")
    p.add_argument("--autopilot", action="store_true",
                   help="play the user too: answer dialogs after 3-8 s, type tasks after 3-10 s")
    p.add_argument("--seed", type=int, default=None, help="random seed (deterministic script)")
    p.add_argument("--speed", type=float, default=1.0,
                   help="divide every delay by this (e.g. 10 runs ten times faster)")
    p.add_argument("--tasks", type=int, default=0,
                   help="autopilot: exit when this many tasks are done (0: run until killed)")
    p.add_argument("--alt", action="store_true", help="draw on the alternate screen")
    p.add_argument("--look", choices=LOOKS, default="current",
                   help="current: Claude Code 2.1 (rules around the input, no side borders, "
                        "'⏸ manual mode on · …' footer); classic: 1.x bordered boxes, '> ' prompt")
    args = p.parse_args(argv)
    if not args.speed > 0:
        p.error("--speed must be positive")
    in_fd = 0
    try:
        os.fstat(0)
    except OSError:
        in_fd = None
    agent = FakeAgent(autopilot=args.autopilot, seed=args.seed, speed=args.speed, tasks=args.tasks,
                      alt=args.alt, look=args.look, in_fd=in_fd, out_fd=sys.stdout.fileno(),
                      truth_path=os.environ.get("AGENTSTATE_TRUTH_FILE") or None,
                      trace_path=os.environ.get("AGENTSTATE_TRACE_FILE") or None)
    try:
        return agent.run()
    except KeyboardInterrupt:  # a SIGINT before the handlers were in place
        agent.restore_tty()
        return 130


if __name__ == "__main__":
    sys.exit(main())
