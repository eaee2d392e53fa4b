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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import AGENTS, ByRelease, Idle, Prompt, Shot, Sleep, WaitText, Working, keys  # noqa: E402

# 1.0.x (seen 1.0.185) has no ripgrep of its own: it looks for `rg` on PATH, else downloads it
# from GitHub into ~/.local/share/opencode/bin/ on the first prompt. Offline that fails and every
# prompt ends at once in an "unknown" error. So for those releases the driver takes ripgrep's
# wheel from PyPI (it ships the binary), unpacks it once beside the installs and links `rg` into
# each throwaway HOME's ~/.local/share/opencode/bin/, where the release would have put it.
RG_VERSION = "14.1.0"
RG_DIR = AGENTS / f"opencode-ripgrep-{RG_VERSION}"
RG_BIN = RG_DIR / f"ripgrep-{RG_VERSION}.data" / "scripts" / "rg"




def needs_rg(release: common.Release | None = None) -> bool:
    return (release or OPENCODE).older_than("1.1.0")


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


class OpencodeRelease(common.NpmRelease):
    def install(self) -> None:
        # the postinstall only links the platform binary in; npm 11 may skip it (allowScripts), but
        # bin/opencode.exe already ships as a hard link to opencode-linux-x64/bin/opencode
        # (1.0.185: bin/opencode is a symlink to it)
        super().install()
        if needs_rg(self):
            install_rg()


OPENCODE = OpencodeRelease("opencode", "opencode-ai", "opencode", pinned="1.18.33")
# the pinned release's paths by their old names (tests/test_real_agents.py)
OC_BIN, VERSION, PREFIX = OPENCODE.bin, OPENCODE.version, OPENCODE.prefix


@dataclass
class Session(common.Session):
    provider: bool = True


def is_idle(s: str) -> bool:
    return ("ctrl+p commands" in s and "esc interrupt" not in s and "to interrupt" not in s
            and "Permission required" not in s and "esc dismiss" not in s)


class Ctx(common.Ctx):
    release = OPENCODE
    key_pause = 0.3
    columns = (42, 22, 8)
    is_idle = staticmethod(is_idle)
    idle_what = "idle footer"
    # a settled shot of a screen that never goes quiet (1.0.x keeps its progress bar running
    # under an inline permission) is retaken unsettled too
    take_mode = "matching"

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

    def requests(self) -> int:
        try:
            return sum(1 for line in self.mock.log.read_text().splitlines() if '"method": "POST"' in line)
        except OSError:
            return 0

    def prompt(self, text: str) -> None:
        """Type a prompt into the input box and make sure it was sent (the mock saw a request)."""
        self.wait_idle()
        self.rec.send(text, literal=True)   # one literal argument: ';' inside is safe
        time.sleep(0.5)
        self.submit(text, lambda before: self.requests() > before, mark=self.requests, window=6,
                    verb="sent")

    def detail(self, facts: dict, dest: Path) -> str:
        last = [r for r in facts["tmux_screen"].split("\n") if r.strip()][-1:] or [""]
        return f" title={facts['title']!r} last={last[0].strip()[:60]!r}"


# ----------------------------------------------------------------------------------------------
# what differs by release: the needles the scripts wait on, the keys they press, the wording of
# the index's `how`. The pinned release's values first; older releases override them.

UI_EXTRA: dict = {}   # a fork's differences from the pinned release's UI (harness/kilo.py)


def ui(c: Ctx | None = None) -> dict:
    """The UI facts of the release driven (c's; without c, opencode's)."""
    older_than = (c.release if c else OPENCODE).older_than
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


def u(key: str):
    """A ui() value of the release driven, for a step (looked up when the step runs)."""
    return lambda c: ui(c)[key]


def if_question(yes: str, no: str):
    """A `how` that depends on whether the release has the question tool (its dialogs)."""
    return lambda c: yes if ui(c)["question"] else no


@dataclass
class Blocked:
    """A permission / question on screen: wait for `wait` (a ui() key or text; None: no wait),
    let it finish drawing (blocked_pause), shoot it."""
    suffix: str
    kind: str
    how: object
    wait: str | None = "perm"
    quiet: float = 0.6

    def __call__(self, c: Ctx) -> None:
        ui_ = ui(c)
        if self.wait:
            c.wait_text(ui_.get(self.wait, self.wait))
        kw = c.blocked_pause(ui_, self.quiet)
        c.shot(self.suffix, "blocked", self.kind, common._text(self.how, c), **kw)


def ukeys(key: str):
    """Press the keys ui()[key] names for the release driven."""
    return lambda c: c.key(*ui(c)[key])


def gone(key: str):
    return lambda c: c.wait_gone(ui(c)[key])


def reject_reason(suffix: str, how: str):
    """Kilo (UI_EXTRA reject_reason): rejecting a permission first asks what to do differently,
    in a text box; shoot it, then confirm it empty with Enter. opencode: nothing to do."""
    def step(c: Ctx) -> None:
        ui_ = ui(c)
        if not ui_.get("reject_reason"):
            return
        c.wait_text(ui_["reject_reason"])
        c.rec.settle(0.6)
        c.shot(suffix, "blocked", "reject-reason",
               f"after {how}: '{ui_['reject_reason']}' text box, 'enter confirm  esc cancel'")
        c.key("Enter")
    return step


def skip(what: str, why: str):
    return lambda c: print(f"  -- skipped on {c.version}: {what} ({why})", flush=True)


QUESTION = "1.1.0"   # ByRelease key: the releases with the `question` tool (and dialog buttons)

# ----------------------------------------------------------------------------------------------
# session scripts

FIRST_80 = [
    Idle("idle-start", "start", lambda c: f"fresh start: logo, empty input box, {ui(c)['idle_footer']}"),
    Prompt("the date parser has a bug with leap years, please fix it", wait=u("reply_q")),
    Idle("idle-reply-question", "reply-question", "reply ending 'Would you like me to add a regression test?'"),
    Prompt("please run `sleep 8 && ls -la` now"),
    Blocked("blocked-bash", "bash-permission",
            lambda c: f"bash tool call under permission.bash=ask: {ui(c)['perm_bash']}"),
    keys("Enter"),
    gone("perm"),
    WaitText("esc interrupt"),
    Working("working-tool-running", "tool-running",
            lambda c: (if_question("approved 'Allow once' with Enter", "accepted with Enter")(c) +
                       "; `sleep 8 && ls -la` runs, 'esc interrupt' footer"), wait=False),
    Idle("idle-after-approve", "after-approve", "the command finished; mock's final text"),
    Prompt("create src/cache_utils.py with a helper"),
    Blocked("blocked-edit", "edit-permission",
            lambda c: f"write tool call under permission.edit=ask: {ui(c)['perm_edit']}"),
    ukeys("reject"),
    reject_reason("blocked-reject-reason", "Reject"),
    Idle("idle-after-reject", "after-reject",
         if_question("rejected the edit by moving to 'Reject' (Right, Right) and Enter", "denied the edit with 'd'")),
    Prompt("take your time and think about the cache layout"),
    WaitText("esc interrupt"),
    Working("working-before-first-token", "waiting-first-token",
            "mock holds the first token; progress dots + 'esc interrupt' footer", wait=False),
    keys("Escape", "Escape"),
    Idle("idle-after-interrupt", "after-interrupt",
         if_question("Esc twice while waiting for the first token ('interrupted')",
                     "Esc twice while waiting for the first token (toast 'The operation was aborted.')")),
]

BIG_160_HEAD = [
    Idle("idle-start", "start", "fresh start at 160 columns"),
    ByRelease({
        QUESTION: [Prompt("let me choose between two designs for the cache layer first"),
                   Blocked("blocked-question", "question",
                           "question tool call: numbered options, '↑↓ select  enter submit  esc dismiss'",
                           wait="esc dismiss"),
                   keys("Enter"),
                   Idle("idle-after-question-answered", "after-reply", "picked option 1 with Enter; mock answered")],
        "0.0.0": [skip("blocked-question, idle-after-question-answered", "no question tool")]}),
    Prompt("run `sleep 10; echo tests passed` please"),
    Blocked("blocked-bash", "bash-permission",
            lambda c: ("bash permission dialog (160 columns)" if ui(c)["question"] else
                       f"bash permission (160 columns): {ui(c)['perm_bash']}")),
    ByRelease({
        QUESTION: [ukeys("allow_always"),
                   Blocked("blocked-bash-always-selected", "bash-permission",
                           "same dialog with 'Allow always' selected (the choice is shown by colour only)",
                           wait=None, quiet=0.4),
                   keys("Enter"),
                   Blocked("blocked-always-allow-confirm", "bash-permission",
                           "'Allow always' asks again: '△ Always allow … until OpenCode is restarted', "
                           "Confirm / Cancel", wait="always_confirm"),
                   keys("Enter")],
        "0.0.0": [skip("blocked-bash-always-selected, blocked-always-allow-confirm",
                       "no buttons to select, 'a' accepts always at once"),
                  ukeys("allow_always"),
                  gone("perm")]}),
    WaitText("esc interrupt"),
    Working("working-tool-running", "tool-running",
            if_question("confirmed 'Allow always'; the 10 s command runs",
                        "accepted always with 'a'; the 10 s command runs"), delay=4, wait=False),
    Idle("idle-after-approve", "after-approve", "the command finished", timeout=60),
]

BIG_160_STREAM = [  # the second half of big-160 (a session of its own on releases whose byte stream is heavy)
    Prompt("walk me through the scheduler slowly", wait="careful walk-through"),
    Working("working-streaming", "streaming", "slow streamed reply, 4 s in", delay=4, wait=False),
    Working("working-streaming-late", "streaming", "same reply 10 s in", delay=6, wait=False),
    Idle("idle-after-reply", "after-reply", "the slow reply finished", timeout=60),
    Prompt("write docs/NOTES.md with the release notes"),
    Blocked("blocked-edit", "edit-permission",
            lambda c: ("write permission dialog (160 columns)" if ui(c)["question"] else
                       f"write permission (160 columns): {ui(c)['perm_edit']}")),
    keys("Enter"),
    Idle("idle-after-approve-edit", "after-approve", "allowed the write once; file created"),
    Prompt("explain the token refresh flow in detail", wait="careful walk-through"),
    Sleep(3),
    keys("Escape", "Escape"),
    Idle("idle-after-interrupt-stream", "after-interrupt", "Esc twice while the reply streamed"),
]

MID_120 = [
    Idle(),
    ByRelease({
        QUESTION: [Prompt("before changing the logger, ask me which option you should use"),
                   Blocked("blocked-question", "question", "question tool dialog (120 columns)", wait="esc dismiss"),
                   keys("Escape"),
                   Idle("idle-after-dismiss", "after-reject", "dismissed the question with Esc")],
        "0.0.0": [skip("blocked-question, idle-after-dismiss", "no question tool")]}),
    Prompt("execute `git status --short > status.txt` for me"),
    Blocked("blocked-bash", "bash-permission",
            lambda c: ("bash permission dialog (120 columns)" if ui(c)["question"] else
                       f"bash permission (120 columns): {ui(c)['perm_bash']}")),
    keys("Escape"),
    reject_reason("blocked-reject-reason-esc", "Esc"),
    Idle("idle-after-reject-esc", "after-reject", "rejected the command with Esc"),
    Prompt("there's an off-by-one in the pager, can you fix it", wait=u("reply_q")),
    Idle("idle-reply-question", "reply-question", "reply ending with a question (120 columns)"),
    Prompt("please ponder whether the API needs pagination", wait="esc interrupt"),
    Working("working-before-first-token", "waiting-first-token", "6 s into the wait for the first token",
            delay=6, wait=False),
    Idle("idle-after-delayed-reply", "after-reply", "the delayed reply arrived", timeout=60),
]

NOPROV_100 = [  # no provider configured at all: what opencode shows then
    Sleep(6, settle=1.0),
    Shot("start-no-provider", "start", "no provider / model configured (see NOTES)", state="idle"),
]


SESSIONS = [
    Session("first-80", 24, 80, run=FIRST_80),
    Session("big-160", 48, 160, run=[BIG_160_HEAD, BIG_160_STREAM]),
    Session("mid-120", 36, 120, run=MID_120),
]


def plan(sessions: list[Session], release: common.Release | None = None) -> list[Session]:
    """The sessions for the release being driven. Releases before 1.14 (seen 1.1.65) repaint
    far more bytes per second (1.1.65's big-160 reached 1.08 MB by its last shot): there big-160
    stops after `idle-after-approve` and its second half (streaming, the write permission, the
    interrupted stream) runs as `big-160-stream`, a fresh session at the same size."""
    if (release or OPENCODE).since("1.14.0"):
        return sessions
    return [sessions[0], Session("big-160", 48, 160, run=BIG_160_HEAD),
            Session("big-160-stream", 48, 160, run=BIG_160_STREAM), sessions[2]]


# ----------------------------------------------------------------------------------------------
def make_dirs(sess: Session, home: Path, proj: Path, port: int,
              config: str = ".config/opencode/opencode.json", release: common.Release | None = None) -> None:
    """HOME, the git project and the provider config (`config`, under HOME: Kilo Code, an
    opencode fork, reads the same settings from .config/kilo/kilo.json)."""
    release = release or OPENCODE
    (home / config).parent.mkdir(parents=True)
    proj.mkdir(parents=True)
    (proj / "main.py").write_text("def main():\n    for i in range(10 - 1):\n        print(i)\n")
    (proj / "README.md").write_text("# demo\n")
    subprocess.run(["git", "init", "-q"], cwd=proj, check=True)
    if needs_rg(release):
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
    if release.older_than("1.14.0"):
        # 1.0.x and 1.1.x (seen 1.0.185, 1.1.65; not 1.14.41, releases between untested) name
        # the session with the built-in "opencode" provider's free small model (gpt-5-nano,
        # opencode.ai/zen), which fails offline (1.1.65 then keeps "New session - <date>" and
        # the title "OpenCode"): point it at the mock as well
        cfg["small_model"] = "mock/mock-model"
    (home / config).write_text(json.dumps(cfg, indent=2))


class Driver(common.Driver):
    """opencode's (and Kilo's) sessions: HOME beside the run folder, the provider config at
    `config` under it."""
    config = ".config/opencode/opencode.json"

    def dirs(self, sess: Session) -> tuple[Path, Path, Path]:
        tag = common.stamp(sess)
        agent = self.release.agent
        return AGENTS / f"{agent}-run-{tag}", AGENTS / f"{agent}-home-{tag}", AGENTS / f"{agent}-run-{tag}" / "proj"


DRIVER = Driver(
    OPENCODE, "opencode", __doc__, Ctx, SESSIONS, common.openai_mock(22, 25),
    setup=lambda d, sess, home, proj, mock: make_dirs(sess, home, proj, mock.port, d.config, d.release),
    describe=lambda s: f"{s.name:12s} {s.cols}x{s.rows} provider={s.provider}",
    plan=plan)

if __name__ == "__main__":
    DRIVER.main()
