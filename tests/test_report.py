"""Report a miss (issue 12 item 5): `report PANE` and the popup's `r` save a bundle of what
the pane shows and what we made of it; harness/from_report.py turns it into a fixture."""
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from conftest import replay_command, wait_for
from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import replay

ROOT = Path(__file__).resolve().parent.parent
BLOCKED = next(f for f in load_index() if f.agent == "claude" and f.state == "blocked"
               and f.kind == "command-approval" and f.id.count("/") == 1)


def cli(env, *args):
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args], capture_output=True,
                          text=True, env=env, timeout=60)


def test_report_saves_a_bundle_that_becomes_a_fixture(tmux_server, sidecar, tmp_path):
    sc = sidecar(interval=0.3, intake="emulate").start()
    # the capture plays once the sidecar pipes the pane: its bytes come through the FIFO
    pane = tmux_server.new_pane(
        f"env AGENTSTATE_AGENT=claude sh -c 'stty -echo; sleep 3; cat {BLOCKED.path}; exec sleep 600'",
        rows=BLOCKED.rows, cols=BLOCKED.cols)
    wait_for(lambda: tmux_server.option(pane, "pane_pipe") == "1", message="piped")
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    env = dict(sc.env, XDG_STATE_HOME=str(tmp_path / "state"))
    out = cli(env, "report", "-L", tmux_server.name, pane)
    assert out.returncode == 0, out.stderr
    assert "attach" in out.stdout and "really in" in out.stdout
    [folder] = [p for p in (tmp_path / "state" / "tmux-agentstate" / "reports").iterdir() if p.is_dir()]
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    names = {p.name for p in folder.iterdir()}
    assert names == {"report.json", "screen.ansi", "screen.txt", "screen.raw", "recent.raw"}
    facts = json.loads((folder / "report.json").read_text())
    assert (facts["agent"], facts["state"], facts["screen_verdict"], facts["published"]) == \
        ("claude", "blocked", "blocked", "blocked")
    assert facts["rule"] and facts["size"] == f"{BLOCKED.rows}x{BLOCKED.cols}"
    assert facts["manifest_source"] == "bundled" and facts["recent_bytes"] > 0
    # the sidecar's tail of the pane's bytes: the end of what the capture printed (the tty
    # adds a CR before each LF on the way)
    tail = (folder / "recent.raw").read_bytes()[-2000:].replace(b"\r", b"")
    assert len(tail) > 1000 and BLOCKED.path.read_bytes().replace(b"\r", b"").endswith(tail)
    with tarfile.open(folder.with_name(folder.name + ".tar.gz")) as tar:
        assert {m.name.split("/", 1)[-1] for m in tar.getmembers() if m.isfile()} == names
    # into a fixture, as a user would say it was (here: idle, to see the entry carry it)
    fixtures = tmp_path / "fixtures"
    made = subprocess.run([sys.executable, str(ROOT / "harness" / "from_report.py"),
                           str(folder.with_name(folder.name + ".tar.gz")), "--state", "idle",
                           "--kind", "reported-prompt", "--out", str(fixtures)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    [fx] = load_index(fixtures)
    assert (fx.agent, fx.state, fx.kind, fx.rows, fx.cols) == \
        ("claude", "idle", "reported-prompt", BLOCKED.rows, BLOCKED.cols)
    assert "the screen rules said blocked" in fx.how
    view = replay(fx.path.read_bytes(), fx.rows, fx.cols).view()
    assert Catalog([BUNDLED_DIR]).get("claude").evaluate(view).state == "blocked"
    tmux_rows = [r.rstrip() for r in (folder / "screen.txt").read_text().split("\n")[:fx.rows]]
    assert [r.rstrip() for r in view.rows] == tmux_rows + [""] * (fx.rows - len(tmux_rows))


def test_report_of_a_missing_pane_is_one_line_and_writes_nothing(tmux_server, tmp_path):
    tmux_server.new_pane("sleep 600")
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"))
    env.pop("TMUX", None)
    out = cli(env, "report", "-L", tmux_server.name, "%999")
    assert out.returncode != 0 and out.stdout == "" and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "state").exists()


def test_the_popup_reports_the_selected_pane(tmux_server, sidecar, tmp_path):
    pane = tmux_server.new_pane(replay_command(BLOCKED.path, "claude"), rows=BLOCKED.rows,
                                cols=BLOCKED.cols)
    sc = sidecar(interval=0.3).start()
    wait_for(lambda: tmux_server.state(pane) == "blocked", message="blocked")
    env = " ".join(f"{k}={v}" for k, v in (("XDG_STATE_HOME", tmp_path / "state"),
                                            ("XDG_RUNTIME_DIR", sc.env["XDG_RUNTIME_DIR"])))
    popup = tmux_server.new_pane(f"env {env} {sys.executable} -m tmux_agentstate popup -L "
                                 f"{tmux_server.name}", rows=20, cols=200)
    wait_for(lambda: "claude" in tmux_server.cmd("capture-pane", "-p", "-t", popup),
             message="popup rows")
    tmux_server.cmd("send-keys", "-t", popup, "r")
    wait_for(lambda: "report saved:" in tmux_server.cmd("capture-pane", "-p", "-t", popup),
             message="report saved")
    reports = tmp_path / "state" / "tmux-agentstate" / "reports"
    [folder] = [p for p in reports.iterdir() if p.is_dir()]
    assert json.loads((folder / "report.json").read_text())["state"] == "blocked"
    tmux_server.cmd("send-keys", "-t", popup, "q")


def test_report_into_a_folder_never_writes_through_a_planted_link(tmux_server, tmp_path):
    """Issue 25 item 6: in a shared folder, another user can plant a link at the name the bundle
    or its archive will take; the report is refused with one line and the link's target is
    untouched (before: the .tar.gz was written through the link, over its target)."""
    pane = tmux_server.new_pane("sleep 600")
    shared = tmp_path / "shared"
    shared.mkdir()
    precious = tmp_path / "precious"
    precious.write_text("the user's own file\n")
    env = dict(os.environ)
    env.pop("TMUX", None)
    for kind in ("archive", "folder"):
        for p in shared.iterdir():
            p.unlink()
        # the names of the next seconds' bundles (the stamp is the time of the report)
        now = time.time()
        for s in range(-1, 30):
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + s))
            name = f"{stamp}-unknown-{pane.lstrip('%')}" + (".tar.gz" if kind == "archive" else "")
            (shared / name).symlink_to(precious)
        out = cli(env, "report", "-L", tmux_server.name, pane, "--into", str(shared))
        assert out.returncode != 0 and out.stdout == "", (kind, out)
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
        assert "exists already" in out.stderr and str(precious) in out.stderr, out.stderr
        assert precious.read_text() == "the user's own file\n"
        assert all(p.is_symlink() for p in shared.iterdir()), list(shared.iterdir())  # no leftovers
    for p in shared.iterdir():
        p.unlink()
    out = cli(env, "report", "-L", tmux_server.name, pane, "--into", str(shared))
    assert out.returncode == 0, out.stderr
    [folder] = [p for p in shared.iterdir() if p.is_dir()]
    archive = folder.with_name(folder.name + ".tar.gz")
    assert oct(archive.stat().st_mode & 0o777) == "0o600" and not archive.is_symlink()
