#!/usr/bin/env python3
"""Capture real opencode fixtures against the mock model server.

    python harness/opencode.py install                 # npm install the pinned opencode-ai
    python harness/opencode.py capture [--only NAME]   # run the scenarios, write fixtures/opencode/
    python harness/opencode.py list                    # the sessions
    python harness/opencode.py capture --version V     # another release: fixtures/opencode/V/

Each session runs the real TUI in a private tmux server (harness/tmuxrec.py) with a throwaway
HOME (config in ~/.config/opencode/opencode.json: an `@ai-sdk/openai-compatible` provider
pointing at harness/mock_openai.py, `permission: {bash: ask, edit: ask}`) and a git project
folder under /work/agents. The driver waits on tmux's own screen, and snapshots the full byte
prefix so far as fixtures/opencode/<name>.raw (+ .screen.txt). `--only` takes a session name or a
fixture name (the whole session runs; only matching fixtures are rewritten). index.toml is
merged, not replaced.

Processes: the npm bin is a hard link to the native binary (`opencode`). After each session the
private tmux server is killed and then, by PID, every process whose command line or environment
names the session's unique HOME (never by process name: other agents run on this machine).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import AGENTS, REPO  # noqa: E402
from tmuxrec import Recording  # noqa: E402

PINNED = "1.18.33"
VERSION = PINNED
PREFIX = AGENTS / f"opencode-{VERSION}"
OC_BIN = PREFIX / "node_modules" / ".bin" / "opencode"
OUT = REPO / "fixtures" / "opencode"


def older_than(v: str) -> bool:
    """True when the release being driven (VERSION) is older than `v`."""
    return common.vtuple(VERSION) < common.vtuple(v)


def configure(version: str | None, out: Path | None) -> None:
    """`--version V` / `--out DIR`: point the install prefix, the binary and the fixture folder
    (here and on Ctx, whose attributes were bound at class definition) at release V. The pinned
    release keeps its paths (fixtures/opencode/)."""
    global VERSION, PREFIX, OC_BIN, OUT
    if version:
        VERSION = version
        PREFIX = AGENTS / f"opencode-{VERSION}"
        OC_BIN = PREFIX / "node_modules" / ".bin" / "opencode"
    if out:
        OUT = out.resolve()
    elif VERSION != PINNED:
        OUT = common.release_out("opencode", VERSION)
    Ctx.version, Ctx.out = VERSION, OUT


# 1.0.x (seen 1.0.185) has no ripgrep of its own: it looks for `rg` on PATH, else downloads it
# from GitHub into ~/.local/share/opencode/bin/ on the first prompt. Offline that fails and every
# prompt ends at once in an "unknown" error. So for those releases the driver takes ripgrep's
# wheel from PyPI (it ships the binary), unpacks it once beside the installs and links `rg` into
# each throwaway HOME's ~/.local/share/opencode/bin/, where the release would have put it.
RG_VERSION = "14.1.0"
RG_DIR = AGENTS / f"opencode-ripgrep-{RG_VERSION}"
RG_BIN = RG_DIR / f"ripgrep-{RG_VERSION}.data" / "scripts" / "rg"


def needs_rg() -> bool:
    return older_than("1.1.0")


def install_rg() -> None:
    if RG_BIN.exists():
        return
    import tempfile
    import zipfile
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--only-binary", ":all:", "--no-deps",
                        "-d", tmp, f"ripgrep=={RG_VERSION}"], check=True)
        wheel = next(Path(tmp).glob("ripgrep-*.whl"))
        RG_DIR.mkdir(parents=True, exist_ok=True)
        zipfile.ZipFile(wheel).extractall(RG_DIR)
    RG_BIN.chmod(0o755)
    print(subprocess.run([str(RG_BIN), "--version"], capture_output=True, text=True).stdout.split("\n")[0])


def install() -> None:
    # the postinstall only links the platform binary in; npm 11 may skip it (allowScripts), but
    # bin/opencode.exe already ships as a hard link to opencode-linux-x64/bin/opencode
    # (1.0.185: bin/opencode is a symlink to it)
    common.npm_install(PREFIX, OC_BIN, "opencode-ai", VERSION)
    if needs_rg():
        install_rg()


@dataclass
class Session:
    name: str
    rows: int
    cols: int
    provider: bool = True
    run: Callable = None


def is_idle(s: str) -> bool:
    return ("ctrl+p commands" in s and "esc interrupt" not in s and "to interrupt" not in s
            and "Permission required" not in s and "esc dismiss" not in s)


class Ctx(common.Ctx):
    agent, version, out = "opencode", VERSION, OUT
    key_pause = 0.3
    columns = (42, 22, 8)

    def __init__(self, sess: Session, rec: Recording, mock_log: Path, only: str | None, index: dict):
        super().__init__(sess, rec, only, index)
        self.log = mock_log

    def wait_gone(self, needle: str, timeout: float = 60) -> str:
        return self.wait(lambda s, *_: needle not in s, f"{needle!r} gone", timeout)

    def blocked_pause(self, u: dict, quiet: float = 0.6) -> dict:
        """Before a blocked shot: let the dialog finish drawing; returns the shot's settle
        keyword (none: the default settled shot; a screen that never goes quiet: unsettled)."""
        if u["blocked_quiet"]:
            self.rec.settle(quiet)
            return {}
        time.sleep(1.5)
        return {"settle": None}

    def wait_idle(self, timeout: float = 90) -> str:
        scr = self.wait(is_idle, "idle footer", timeout)
        self.rec.settle(0.8, timeout=10)
        return scr

    def requests(self) -> int:
        try:
            return sum(1 for line in self.log.read_text().splitlines() if '"method": "POST"' in line)
        except OSError:
            return 0

    def prompt(self, text: str) -> None:
        """Type a prompt into the input box and make sure it was sent (the mock saw a request)."""
        self.wait_idle()
        self.rec.send(text, literal=True)   # one literal argument: ';' inside is safe
        time.sleep(0.5)
        self.submit(text, lambda before: self.requests() > before, mark=self.requests, window=6,
                    verb="sent")

    def take(self, dest: Path, settle: float | None) -> dict:
        # A settled shot of a screen that never goes quiet (1.0.x keeps its progress bar running
        # under an inline permission) is retaken unsettled too
        return self.take_matching(dest, settle)

    def detail(self, facts: dict, dest: Path) -> str:
        last = [r for r in facts["tmux_screen"].split("\n") if r.strip()][-1:] or [""]
        return f" title={facts['title']!r} last={last[0].strip()[:60]!r}"


# ----------------------------------------------------------------------------------------------
# what differs by release: the needles the scripts wait on, the keys they press, the wording of
# the index's `how`. The pinned release's values first; older releases override them.

UI_EXTRA: dict = {}   # a fork's differences from the pinned release's UI (harness/kilo.py)


def ui() -> dict:
    u = {
        "perm": "Permission required",        # on screen while a permission waits
        "question": True,                      # the model's `question` tool exists
        "allow_always": ("Right",),            # move to / press "Allow always"
        "always_confirm": "Always allow",      # "Allow always" asks again (Enter = Confirm)
        "reject": ("Right", "Right", "Enter"),  # reject from the dialog's buttons
        "perm_bash": "'Permission required / # Shell command' dialog",
        "perm_edit": "'Permission required / → Edit <file>' with a diff",
        "idle_footer": "'tab agents  ctrl+p commands'",
        "blocked_quiet": True,                 # the screen goes quiet while a permission waits
        "reply_q": "regression test?",         # the end of the mock's reply-with-a-question
    }
    if older_than("1.14.0"):
        # 1.1.65 (and 1.0.185): while a permission dialog is up the TUI keeps repainting the
        # same cells (a hidden progress bar's frame: the bytes flow, the screen does not change),
        # so the pane never goes quiet; a blocked shot waits a fixed 1.5 s, taken unsettled.
        # 1.14.41 is quiet there. Releases between untested.
        u.update(blocked_quiet=False)
    if older_than("1.1.0"):
        # 1.0.x (seen 1.0.185): no permission dialog. The request is asked inline, under the
        # tool's block in the transcript: "Permission required to run this tool:" and the key
        # row "enter accept  a accept always  d deny", while the footer keeps its progress bar
        # and "esc interrupt" (and the status line shows "◉ 1 Permission"). 'a' allows always
        # at once (no confirm), 'd' denies, Esc rejects too. No `question` tool (the model gets
        # bash read glob grep list edit write task webfetch todowrite todoread).
        u.update(perm="Permission required to run this tool", question=False,
                 allow_always=("a",), always_confirm=None, reject=("d",),
                 perm_bash="inline 'Permission required to run this tool:' / 'enter accept  a "
                           "accept always  d deny' under the '$ <command>' block",
                 perm_edit="inline 'Permission required to run this tool:' / 'enter accept  a "
                           "accept always  d deny' under the file's diff",
                 idle_footer="'tab switch agent  ctrl+p commands'",
                 # (blocked_quiet False: here the progress bar visibly runs on)
                 # 1.0.185 at 120 columns left the last streamed words of the reply undrawn
                 # ("Would you like me" and no more) although the turn had finished
                 reply_q="Would you like me")
    u.update(UI_EXTRA)
    return u


def reject_reason(c: Ctx, u: dict, suffix: str, how: str) -> None:
    """Kilo (UI_EXTRA reject_reason): rejecting a permission first asks what to do differently,
    in a text box; shoot it, then confirm it empty with Enter. opencode: nothing to do."""
    if not u.get("reject_reason"):
        return
    c.wait_text(u["reject_reason"])
    c.rec.settle(0.6)
    c.shot(suffix, "blocked", "reject-reason",
           f"after {how}: '{u['reject_reason']}' text box, 'enter confirm  esc cancel'")
    c.key("Enter")


def skip(c: Ctx, what: str, why: str) -> None:
    print(f"  -- skipped on {VERSION}: {what} ({why})", flush=True)


# ----------------------------------------------------------------------------------------------
# session scripts

def s_first_80(c: Ctx) -> None:
    u = ui()
    c.wait_idle()
    c.shot("idle-start", "idle", "start", f"fresh start: logo, empty input box, {u['idle_footer']}")
    c.prompt("the date parser has a bug with leap years, please fix it")
    c.wait_text(u["reply_q"])
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question",
           "reply ending 'Would you like me to add a regression test?'")
    c.prompt("please run `sleep 8 && ls -la` now")
    c.wait_text(u["perm"])
    kw = c.blocked_pause(u)
    c.shot("blocked-bash", "blocked", "bash-permission",
           f"bash tool call under permission.bash=ask: {u['perm_bash']}", **kw)
    c.key("Enter")
    c.wait_gone(u["perm"])
    c.wait_text("esc interrupt")
    time.sleep(3)
    c.shot("working-tool-running", "working", "tool-running",
           ("approved 'Allow once' with Enter" if u["question"] else "accepted with Enter") +
           "; `sleep 8 && ls -la` runs, 'esc interrupt' footer",
           settle=None)
    c.wait_idle()
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished; mock's final text")
    c.prompt("create src/cache_utils.py with a helper")
    c.wait_text(u["perm"])
    kw = c.blocked_pause(u)
    c.shot("blocked-edit", "blocked", "edit-permission",
           f"write tool call under permission.edit=ask: {u['perm_edit']}", **kw)
    c.key(*u["reject"])
    reject_reason(c, u, "blocked-reject-reason", "Reject")
    c.wait_idle()
    c.shot("idle-after-reject", "idle", "after-reject",
           "rejected the edit by moving to 'Reject' (Right, Right) and Enter" if u["question"] else
           "denied the edit with 'd'")
    c.prompt("take your time and think about the cache layout")
    c.wait_text("esc interrupt")
    time.sleep(3)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "mock holds the first token; progress dots + 'esc interrupt' footer", settle=None)
    c.key("Escape", "Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt", "idle", "after-interrupt",
           "Esc twice while waiting for the first token ('interrupted')" if u["question"] else
           "Esc twice while waiting for the first token (toast 'The operation was aborted.')")


def s_big_160(c: Ctx, then_stream: bool = True) -> None:
    u = ui()
    c.wait_idle()
    c.shot("idle-start", "idle", "start", "fresh start at 160 columns")
    if u["question"]:
        c.prompt("let me choose between two designs for the cache layer first")
        c.wait_text("esc dismiss")
        kw = c.blocked_pause(u)
        c.shot("blocked-question", "blocked", "question",
               "question tool call: numbered options, '↑↓ select  enter submit  esc dismiss'", **kw)
        c.key("Enter")
        c.wait_idle()
        c.shot("idle-after-question-answered", "idle", "after-reply",
               "picked option 1 with Enter; mock answered")
    else:
        skip(c, "blocked-question, idle-after-question-answered", "no question tool")
    c.prompt("run `sleep 10; echo tests passed` please")
    c.wait_text(u["perm"])
    kw = c.blocked_pause(u)
    c.shot("blocked-bash", "blocked", "bash-permission",
           "bash permission dialog (160 columns)" if u["question"] else
           f"bash permission (160 columns): {u['perm_bash']}", **kw)
    if u["always_confirm"]:
        c.key(*u["allow_always"])
        kw = c.blocked_pause(u, 0.4)
        c.shot("blocked-bash-always-selected", "blocked", "bash-permission",
               "same dialog with 'Allow always' selected (the choice is shown by colour only)", **kw)
        c.key("Enter")
        c.wait_text(u["always_confirm"])
        kw = c.blocked_pause(u)
        c.shot("blocked-always-allow-confirm", "blocked", "bash-permission",
               "'Allow always' asks again: '△ Always allow … until OpenCode is restarted', Confirm / Cancel",
               **kw)
        c.key("Enter")
    else:
        skip(c, "blocked-bash-always-selected, blocked-always-allow-confirm",
             "no buttons to select, 'a' accepts always at once")
        c.key(*u["allow_always"])
        c.wait_gone(u["perm"])
    c.wait_text("esc interrupt")
    time.sleep(4)
    c.shot("working-tool-running", "working", "tool-running",
           "confirmed 'Allow always'; the 10 s command runs" if u["always_confirm"] else
           "accepted always with 'a'; the 10 s command runs", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-approve", "idle", "after-approve", "the command finished")
    if then_stream:
        s_big_160_stream(c)


def s_big_160_stream(c: Ctx) -> None:
    """The second half of big-160 (a session of its own on releases whose byte stream is heavy)."""
    u = ui()
    c.prompt("walk me through the scheduler slowly")
    c.wait_text("careful walk-through")
    time.sleep(4)
    c.shot("working-streaming", "working", "streaming", "slow streamed reply, 4 s in", settle=None)
    time.sleep(6)
    c.shot("working-streaming-late", "working", "streaming", "same reply 10 s in", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-reply", "idle", "after-reply", "the slow reply finished")
    c.prompt("write docs/NOTES.md with the release notes")
    c.wait_text(u["perm"])
    kw = c.blocked_pause(u)
    c.shot("blocked-edit", "blocked", "edit-permission",
           "write permission dialog (160 columns)" if u["question"] else
           f"write permission (160 columns): {u['perm_edit']}", **kw)
    c.key("Enter")
    c.wait_idle()
    c.shot("idle-after-approve-edit", "idle", "after-approve", "allowed the write once; file created")
    c.prompt("explain the token refresh flow in detail")
    c.wait_text("careful walk-through")
    time.sleep(3)
    c.key("Escape", "Escape")
    c.wait_idle()
    c.shot("idle-after-interrupt-stream", "idle", "after-interrupt", "Esc twice while the reply streamed")


def s_mid_120(c: Ctx) -> None:
    u = ui()
    c.wait_idle()
    if u["question"]:
        c.prompt("before changing the logger, ask me which option you should use")
        c.wait_text("esc dismiss")
        kw = c.blocked_pause(u)
        c.shot("blocked-question", "blocked", "question", "question tool dialog (120 columns)", **kw)
        c.key("Escape")
        c.wait_idle()
        c.shot("idle-after-dismiss", "idle", "after-reject", "dismissed the question with Esc")
    else:
        skip(c, "blocked-question, idle-after-dismiss", "no question tool")
    c.prompt("execute `git status --short > status.txt` for me")
    c.wait_text(u["perm"])
    kw = c.blocked_pause(u)
    c.shot("blocked-bash", "blocked", "bash-permission",
           "bash permission dialog (120 columns)" if u["question"] else
           f"bash permission (120 columns): {u['perm_bash']}", **kw)
    c.key("Escape")
    reject_reason(c, u, "blocked-reject-reason-esc", "Esc")
    c.wait_idle()
    c.shot("idle-after-reject-esc", "idle", "after-reject", "rejected the command with Esc")
    c.prompt("there's an off-by-one in the pager, can you fix it")
    c.wait_text(u["reply_q"])
    c.wait_idle()
    c.shot("idle-reply-question", "idle", "reply-question", "reply ending with a question (120 columns)")
    c.prompt("please ponder whether the API needs pagination")
    c.wait_text("esc interrupt")
    time.sleep(6)
    c.shot("working-before-first-token", "working", "waiting-first-token",
           "6 s into the wait for the first token", settle=None)
    c.wait_idle(timeout=60)
    c.shot("idle-after-delayed-reply", "idle", "after-reply", "the delayed reply arrived")


def s_noprov_100(c: Ctx) -> None:
    """No provider configured at all: what opencode shows then."""
    time.sleep(6)
    c.rec.settle(1.0)
    c.shot("start-no-provider", "idle", "start", "no provider / model configured (see NOTES)")


SESSIONS = [
    Session("first-80", 24, 80, run=s_first_80),
    Session("big-160", 48, 160, run=s_big_160),
    Session("mid-120", 36, 120, run=s_mid_120),
]


def sessions() -> list[Session]:
    """The sessions for the release being driven. Releases before 1.14 (seen 1.1.65) repaint
    far more bytes per second (1.1.65's big-160 reached 1.08 MB by its last shot): there big-160
    stops after `idle-after-approve` and its second half (streaming, the write permission, the
    interrupted stream) runs as `big-160-stream`, a fresh session at the same size."""
    if not older_than("1.14.0"):
        return SESSIONS
    head = lambda c: s_big_160(c, then_stream=False)  # noqa: E731
    return [SESSIONS[0], Session("big-160", 48, 160, run=head),
            Session("big-160-stream", 48, 160, run=s_big_160_stream), SESSIONS[2]]


# ----------------------------------------------------------------------------------------------
def make_dirs(sess: Session, home: Path, proj: Path, port: int,
              config: str = ".config/opencode/opencode.json") -> None:
    """HOME, the git project and the provider config (`config`, under HOME: Kilo Code, an
    opencode fork, reads the same settings from .config/kilo/kilo.json)."""
    (home / config).parent.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    if needs_rg():
        (home / ".local" / "share" / "opencode" / "bin").mkdir(parents=True)
        (home / ".local" / "share" / "opencode" / "bin" / "rg").symlink_to(RG_BIN)
    if not sess.provider:
        return
    cfg = {"$schema": "https://opencode.ai/config.json",
           "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                 "options": {"baseURL": f"http://127.0.0.1:{port}/v1",
                                             "apiKey": "sk-mock-not-a-real-key"},
                                 "models": {"mock-model": {"name": "Mock Model"}}}},
           "model": "mock/mock-model", "autoupdate": False, "share": "disabled",
           "permission": {"bash": "ask", "edit": "ask"}}
    if older_than("1.14.0"):
        # 1.0.x and 1.1.x (seen 1.0.185, 1.1.65; not 1.14.41, releases between untested) name
        # the session with the built-in "opencode" provider's free small model (gpt-5-nano,
        # opencode.ai/zen), which fails offline (1.1.65 then keeps "New session - <date>" and
        # the title "OpenCode"): point it at the mock as well
        cfg["small_model"] = "mock/mock-model"
    (home / config).write_text(json.dumps(cfg, indent=2))


def run_session(sess: Session, mock: common.Mock, only: str | None, index: dict) -> list[str]:
    tag = common.stamp(sess)
    base = AGENTS / f"opencode-run-{tag}"
    home = AGENTS / f"opencode-home-{tag}"
    proj = base / "proj"
    make_dirs(sess, home, proj, mock.port)
    env = {"HOME": str(home), **common.tmux_env()}
    return common.run_session(sess, lambda rec: Ctx(sess, rec, mock.log, only, index), sess.run,
                              base=base, home=home, cmd=[str(OC_BIN)], env=env, cwd=proj)


def capture(only: str | None) -> None:
    common.capture(only, agent="opencode", sessions=sessions(), out=OUT, bin_=OC_BIN, install=install,
                   run=run_session,
                   start_mock=lambda log: common.Mock("mock_openai.py", log, slow=22, delay=25),
                   title="# Real opencode captures; written by harness/opencode.py (do not edit by hand).")


def main() -> None:
    common.main(__doc__, install=install, capture=capture, sessions=SESSIONS,
                describe=lambda s: f"{s.name:12s} {s.cols}x{s.rows} provider={s.provider}",
                configure=configure)


if __name__ == "__main__":
    main()