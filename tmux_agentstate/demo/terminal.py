"""The fake agent's terminal: keys in raw mode, the window size, tty modes, signals. A part of
`FakeAgent` (fake_agent.py)."""
from __future__ import annotations

import os
import signal
import struct

try:  # POSIX only; without them it still runs (no raw keys, no size queries)
    import fcntl
    import termios
except ImportError:  # pragma: no cover
    fcntl = termios = None

from .material import OPTIONS


class Terminal:
    def on_bytes(self, data: bytes) -> None:
        data = self.esc_pending + data
        self.esc_pending = b""
        data = data.replace(b"\x1b[200~", b"").replace(b"\x1b[201~", b"")  # bracketed paste
        text = data.decode("utf-8", "replace")
        i = 0
        while i < len(text) and not self.quit:
            c = text[i]
            if c == "\x1b":
                if i + 1 == len(text):
                    self.key("esc")
                    i += 1
                    continue
                if text[i + 1] in "[O":
                    j = i + 2
                    while j < len(text) and not ("@" <= text[j] <= "~"):
                        j += 1
                    seq = text[i:j + 1]
                    self.key({"\x1b[A": "up", "\x1b[B": "down", "\x1bOA": "up", "\x1bOB": "down",
                              "\x1b[Z": "backtab"}.get(seq, "ignored"))
                    i = j + 1
                    continue
                self.key("esc")  # ESC + key (Alt-key): treat as Esc, drop the key
                i += 2
                continue
            self.key(c)
            i += 1

    def key(self, k: str) -> None:
        if self.mode == "ask":
            a = self.ask
            if k in ("1", "\r", "\n"):
                self.answer({0: "yes", 1: "always"}.get(a["sel"], "no") if k != "1" else "yes")
            elif k == "2":
                self.answer("always")
            elif k in ("3", "esc", "\x03"):
                self.answer("no")
            elif k in ("up", "down"):
                a["sel"] = (a["sel"] + (1 if k == "down" else -1)) % len(OPTIONS)
                self.render(what="select")
            return
        if k == "\x03":
            if self.mode == "task":
                self.interrupt()
            elif self.input:
                self.input = ""
                self.redraw_row("input", "key")
            else:
                self.quit = True
            return
        if k == "\x04":
            if self.mode == "idle" and not self.input:
                self.quit = True
            return
        if k == "esc":
            if self.mode == "task":
                self.interrupt()
            return
        if k in ("\r", "\n"):
            if self.mode == "idle" and self.input.strip():
                self.ap_typing, self.ap_at = None, None
                self.start_task(self.input.strip())
            return
        if k in ("\x7f", "\b"):
            if self.input:
                self.input = self.input[:-1]
                self.redraw_row("input", "key")
            return
        if k == "\x15":  # Ctrl-U
            self.input = ""
            self.redraw_row("input", "key")
            return
        if len(k) == 1 and (k >= " " or k == "\t") and k != "\x7f":
            if len(self.input) < 2000:
                self.input += " " if k == "\t" else k
                self.redraw_row("input", "key")

    # -- terminal setup ----------------------------------------------------------------------------
    def query_size(self) -> None:
        rows = cols = 0
        if fcntl is not None:
            for fd in (self.out_fd, self.in_fd):
                if fd is None:
                    continue
                try:
                    rows, cols = struct.unpack("HHHH", fcntl.ioctl(fd, termios.TIOCGWINSZ,
                                                                   b"\0" * 8))[:2]
                except OSError:
                    continue
                if rows and cols:
                    break
        if not (rows and cols):
            try:
                rows, cols = int(os.environ.get("LINES", 0)), int(os.environ.get("COLUMNS", 0))
            except ValueError:
                rows = cols = 0
        self.rows = rows if rows > 0 else 24
        self.cols = cols if cols > 0 else 80

    def setup_tty(self) -> None:
        if self.in_fd is None or termios is None:
            return
        try:
            if not os.isatty(self.in_fd):
                return
            self.saved_tty = termios.tcgetattr(self.in_fd)
            new = termios.tcgetattr(self.in_fd)
            new[0] &= ~(termios.IXON | termios.ICRNL | termios.INLCR | termios.IGNCR)
            new[3] &= ~(termios.ECHO | termios.ICANON | termios.ISIG | termios.IEXTEN)
            new[6][termios.VMIN] = 1
            new[6][termios.VTIME] = 0
            termios.tcsetattr(self.in_fd, termios.TCSANOW, new)
        except (OSError, termios.error):
            self.saved_tty = None

    def restore_tty(self) -> None:
        if self.saved_tty is not None:
            try:
                termios.tcsetattr(self.in_fd, termios.TCSANOW, self.saved_tty)
            except (OSError, termios.error):
                pass
            self.saved_tty = None

    def _on_signal(self, signum, _frame) -> None:
        if signum == signal.SIGWINCH:
            self.winch = True
        else:
            self.quit = True

    def install_signals(self) -> dict:
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        old = {"wakeup": signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)}
        for name in ("SIGTERM", "SIGHUP", "SIGINT", "SIGWINCH", "SIGQUIT"):
            sig = getattr(signal, name, None)
            if sig is not None:
                old[sig] = signal.signal(sig, self._on_signal)
        if hasattr(signal, "SIGPIPE"):
            old[signal.SIGPIPE] = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        return old

    def restore_signals(self, old: dict) -> None:
        for sig, handler in old.items():
            if sig == "wakeup":
                signal.set_wakeup_fd(handler if isinstance(handler, int) else -1)
            else:
                try:
                    signal.signal(sig, handler)
                except (OSError, ValueError, TypeError):
                    pass
        for fd in (self.wake_r, self.wake_w):
            if fd is not None:
                os.close(fd)
        self.wake_r = self.wake_w = None

    # -- main loop -----------------------------------------------------------------------------------
