#!/usr/bin/env python3
"""Capture real Mistral Vibe fixtures against the mock OpenAI server.

    python harness/vibe.py install                 # the pinned mistral-vibe in its own venv
    python harness/vibe.py capture [--only NAME]   # run the scenarios, write fixtures/vibe/
    python harness/vibe.py list                    # the sessions
    python harness/vibe.py capture --version V     # another release: fixtures/vibe/V/

Mistral Vibe (PyPI `mistral-vibe`, Python >= 3.12, binary `vibe`) runs with no Mistral account
against a `generic` provider: a throwaway HOME whose ~/.vibe/config.toml names one provider
(backend "generic", api_style "openai", api_base harness/mock_openai.py, its key from an env
variable) and one model, `default_agent = "ask"` (every tool call asks; the default agent
"accept-edits" applies file edits unasked) and no telemetry / update checks. It calls POST
/v1/chat/completions (streamed); each first turn of a session also asks for a title with no tools
("You name coding-agent sessions …", a side call to the mock). Its tools bash (a command
approval), write_file (a file approval) and ask_user_question (a question) are driven by the
mock's keyword scenarios. The project holds an AGENTS.md, so Vibe first asks whether to trust it.

3.x: `bin/vibe` is a tiny Python launcher that execs the bundled Rust TUI
`site-packages/vibe/_bin/vibe-rs` (the pane's process), which starts `vibe-app-server` (Python,
setproctitle) as its child. Full screen on the alternate screen; the title is `Vibe`, `>> Vibe`
while a turn runs, `? Vibe` while it waits on the user; every change of state is also reported
with OSC 7501 (`state=working:app=vibe…`, `state=blocked:kind=permission…`).

Under the transcript: a spinner row while a turn runs ('<braille> Generating… (3s Esc/Ctrl+C to
interrupt)'), a rule with the agent's name at its right end ('──── ask ─'), the prompt row '>',
a rule, and the status row '<cwd> … mock[off] · 1.28k/68k tokens (2%)'. A permission dialog is a
box under the spinner row ('Permission for the … tool', '1. Allow once' … '4. Deny', '↑↓/jk
navigate  Enter select  Esc reject').

2.26.1 (the last 2.x, captured at 120x36 into fixtures/vibe/2.26.1/) is the Python/Textual app
(process `Vibe CLI`, no OSC 7501): the same prompt and dialogs, its own trust box (choices without
numbers) and status row ('<cwd> [PID n] … tokens (1%)'); a lone Esc there acts only once another
key follows, so `escape` presses it again until the dialog / the turn is gone.

After each session the private tmux server is killed and then, by PID, every process whose
command line or environment names the session's unique HOME (never by process name).

Install: 3.0.3 pins `certifi==2026.10.19`, which the registry here does not serve (only
`2026.10.19.post1`), so when the plain install fails the package goes in with --no-deps and then
its own requirement list with that one pin loosened to `>=` (see VibeRelease).
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Dialog, Idle, Prompt, Shot, Sleep, WaitText, Working, ask, keys  # noqa: E402

LOOSEN = ("certifi",)   # exact pins of these become `>=`: a CA bundle whose pinned build is not served


class VibeRelease(common.PipRelease):
    def install(self) -> None:
        stamp = self.prefix / ".installed"
        if self.bin.exists() and stamp.exists() and stamp.read_text().strip() == self.version:
            print(f"already installed: {self.package} {self.version} in {self.prefix}")
            return
        try:
            return common.pip_install(self.prefix, self.bin, self.package, self.version, self.python)
        except subprocess.CalledProcessError:
            print(f"!! {self.package}=={self.version} does not install as pinned; loosening {LOOSEN}")
        pip = [str(self.prefix / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
        subprocess.run([self.python, "-m", "venv", "--clear", str(self.prefix)], check=True)
        subprocess.run([*pip, "--no-deps", f"{self.package}=={self.version}"], check=True)
        reqs = subprocess.run([str(self.prefix / "bin" / "python"), "-c",
                               "import importlib.metadata as m; print('\\n'.join(m.requires("
                               f"{self.package!r}) or []))"],
                              capture_output=True, text=True, check=True).stdout.split("\n")
        keep = []
        for r in filter(None, reqs):
            if "extra ==" in r:
                continue
            name = r.split("==")[0].strip().lower()
            if name in LOOSEN:
                r = r.replace("==", ">=", 1)
            keep.append(r)
        (self.prefix / "requirements.txt").write_text("\n".join(keep) + "\n")
        subprocess.run([*pip, "-r", str(self.prefix / "requirements.txt")], check=True)
        stamp.write_text(self.version)
        print(f"installed {self.package} {self.version} in {self.prefix}")


VIBE = VibeRelease("vibe", "mistral-vibe", "vibe", pinned="3.0.3", python="3.12")
WORKING = "to interrupt)"                 # the spinner row while a turn runs
DIALOG = "Enter select"                   # the key row of a permission / trust dialog
TRUST = "Trust this folder?"
PROMPT_RULE = re.compile(r"─ [\w-]+ ─\s*$", re.M)   # the rule above the prompt, the agent's name at its end


def is_dialog(s: str) -> bool:
    return DIALOG in s or TRUST in s


def is_idle(s: str) -> bool:
    return bool(PROMPT_RULE.search(s)) and WORKING not in s and not is_dialog(s)


def is_working(s: str) -> bool:
    return WORKING in s


class Ctx(common.Ctx):
    release = VIBE
    columns = (42, 22, 8)
    settle = 1.0
    is_idle = staticmethod(is_idle)
    is_working = staticmethod(is_working)
    started = staticmethod(lambda s: not is_idle(s))
    idle_what = "idle prompt"
    dialog = DIALOG
    dialog_timeout = 90   # the first start (the trust dialog) takes a while
    type_pause = 0.6

    # the spinner never stops while a turn runs (it spins above a dialog too), so the screen is
    # never quiet: no settle after idle / a dialog, but a second look 1 s later
    def wait_idle(self, timeout: float | None = None) -> str:
        self.wait(self.is_idle, self.idle_what, timeout or self.idle_timeout)
        time.sleep(1.0)
        return self.wait(self.is_idle, self.idle_what, timeout or self.idle_timeout)

    def wait_dialog(self, needle: str | None = None, timeout: float | None = None) -> str:
        self.wait_text(needle or self.dialog, timeout or self.dialog_timeout)
        time.sleep(1.0)
        return self.rec.screen()

    def take(self, dest: Path, settle: float | None) -> dict:
        """A quiet 40 ms window whose bytes replay to exactly tmux's screen."""
        if settle:
            time.sleep(settle)
        for _ in range(20):
            facts = self.rec.snapshot_quiet(dest, settle=None)
            if self.replays_like_tmux(dest, facts["tmux_screen"]):
                break
        return facts


def escape(gone):
    """A step: Esc until `gone(screen)`: 2.x (Textual) sometimes drops a lone Esc (a second one
    always took in the trials)."""
    def step(c: Ctx) -> None:
        for _ in range(3):
            c.key("Escape")
            end = time.time() + 4
            while time.time() < end:
                if gone(c.rec.screen()):
                    return
                time.sleep(0.1)
    return step


ALL_STATES = [  # every state this driver reaches, at the session's size
    Dialog("blocked-folder-trust", "folder-trust",
           "first start in a folder with an AGENTS.md: 'Trust this folder?', '1. Trust folder' / "
           "'2. Don't trust'", ("Enter",), needle=TRUST),
    Idle("idle-start", "start", "trusted the folder: logo, empty prompt, status row"),
    ask("please run `sleep 8; ls -la` now", "blocked-command", "shell-permission",
        "bash: 'Permission for the … bash tool', '1. Allow once' … '4. Deny'", ("Enter",)),
    WaitText("Running"),
    Working("working-tool-running", "tool-running", "allowed once; the 8 s command runs", wait=False),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    ask("create src/cache_utils.py with a helper", "blocked-edit", "edit-permission",
        "write_file: the new file and the choices"),
    escape(lambda s: not is_dialog(s)),
    Idle("idle-after-reject-esc", "after-reject", "rejected the write with Esc"),
    Prompt("ask me which option to use", wait="Minimal fix"),
    Sleep(1.5),
    Shot("blocked-question", "question", "ask_user_question: a question, its options and a free-text 'Other'"),
    keys("Enter"),
    Idle("idle-after-answer", "after-answer", "picked the first option; the mock replied"),
    common.DELAYED_REPLY,
    common.streaming_steps("explain the token refresh flow in detail",
                           lambda c: f"slow streamed reply ({c.s.cols} columns)"),
    escape(lambda s: not is_working(s)),
    Idle("idle-after-interrupt-stream", "after-interrupt", "Esc while the reply streamed"),
]

SESSIONS = common.sized(ALL_STATES)


def config(port: int) -> str:
    return f"""active_model = "mock"
default_agent = "ask"
enable_telemetry = false
enable_update_checks = false
enable_auto_update = false

[[providers]]
name = "mockprov"
api_base = "http://127.0.0.1:{port}/v1"
api_key_env_var = "MOCK_API_KEY"
api_style = "openai"
backend = "generic"

[[models]]
name = "mock-model"
provider = "mockprov"
alias = "mock"
max_context_length = 128000
"""


DRIVER = common.Driver(
    VIBE, "Mistral Vibe", __doc__, Ctx, SESSIONS, common.openai_mock(20, 20),
    setup=common.home_config(".vibe/config.toml", config,
                             {"AGENTS.md": "Keep changes small.\n"}),   # an AGENTS.md makes Vibe ask for trust
    env=lambda sess, home, proj, mock: {"HOME": str(home), "MOCK_API_KEY": "dummy-key"})

if __name__ == "__main__":
    DRIVER.main()
