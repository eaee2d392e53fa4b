"""Issue 10, item 7: the runtime folder (FIFOs, lock, status) is never a path another user can
make first, never followed through a symlink, never re-moded when we did not make it."""
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TmuxServer, wait_for
from tmux_agentstate.sidecar.runtime import Runtime

AS_ROOT = os.getuid() == 0


def cli(*args, env=None):
    env = dict(env or os.environ)
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args], capture_output=True,
                          text=True, env=env, timeout=60)


def one_clear_line(result) -> str:
    text = (result.stdout + result.stderr).strip()
    assert result.returncode != 0, text
    assert "Traceback" not in text and len(text.splitlines()) == 1, text
    return text


def test_beside_the_socket_and_the_same_for_every_caller(tmux_server, tmp_path):
    """A default server's folder is in tmux's own 0700 folder, next to its socket; callers
    with different XDG_RUNTIME_DIRs (a hook, a shell over SSH) find one folder, one sidecar."""
    socket = tmux_server.tmux.socket()
    folder = Runtime(socket).dir
    assert folder.parent.parent == Path(socket).parent  # /tmp/tmux-UID/.agentstate/<server>
    envs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir(mode=0o700)
        envs.append(dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path / name)))
    try:
        assert cli("start", "-L", tmux_server.name, env=envs[0]).returncode == 0
        second = cli("start", "-L", tmux_server.name, env=envs[1])
        assert second.returncode == 0 and "already watching" in second.stdout, second.stdout + second.stderr
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert not any((tmp_path / name / "tmux-agentstate").exists() for name in ("a", "b"))
    finally:
        cli("stop", "-L", tmux_server.name)


@pytest.fixture
def shared_server(tmp_path):
    """A server whose socket sits in a folder everyone may write (`-S /tmp/x`), run with no
    XDG_RUNTIME_DIR and TMPDIR pointing at another shared folder: the fallback is taken."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    os.chmod(tmpdir, 0o1777)
    socket = shared / "sock"
    subprocess.run(["tmux", "-S", str(socket), "-f", "/dev/null", "new-session", "-d"], check=True)
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(tmpdir)
    yield socket, tmpdir / f"tmux-agentstate-{os.getuid()}", env
    cli("stop", "-S", str(socket), env=env)
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)


def test_shared_socket_folder_falls_back_to_a_private_folder(shared_server):
    socket, fallback, env = shared_server
    assert cli("start", "-S", str(socket), env=env).returncode == 0
    assert stat.S_IMODE(fallback.lstat().st_mode) == 0o700 and not fallback.is_symlink()
    wait_for(lambda: any(fallback.glob("*/sidecar.lock")), message="the sidecar's folder")


def test_a_symlink_made_first_is_not_followed(shared_server, tmp_path):
    socket, fallback, env = shared_server
    victim = tmp_path / "victim-home"
    victim.mkdir(mode=0o755)
    fallback.symlink_to(victim)  # what another user could make in /tmp before us
    line = one_clear_line(cli("start", "-S", str(socket), env=env))
    assert "symlink" in line
    assert stat.S_IMODE(victim.stat().st_mode) == 0o755 and not any(victim.iterdir())
    for sub in ("status", "stop"):  # every command that needs the folder says the same
        one_clear_line(cli(sub, "-S", str(socket), env=env))
    assert not any(victim.iterdir())


def test_a_folder_open_to_others_is_not_used_nor_re_moded(shared_server):
    socket, fallback, env = shared_server
    fallback.mkdir()
    os.chmod(fallback, 0o777)
    line = one_clear_line(cli("start", "-S", str(socket), env=env))
    assert "open to others" in line
    assert stat.S_IMODE(fallback.stat().st_mode) == 0o777 and not any(fallback.iterdir())


@pytest.mark.skipif(not AS_ROOT, reason="making a folder another user owns needs root")
def test_a_folder_another_user_owns_is_refused(shared_server):
    socket, fallback, env = shared_server
    fallback.mkdir(mode=0o700)
    os.chown(fallback, 4242, 4242)
    line = one_clear_line(cli("start", "-S", str(socket), env=env))
    assert "belongs to uid 4242" in line
    assert not any(fallback.iterdir())


def test_two_servers_in_one_tmux_folder_get_their_own(tmux_server):
    other = TmuxServer(f"{tmux_server.name}-x")
    try:
        a, b = Runtime(tmux_server.tmux.socket()).dir, Runtime(other.tmux.socket()).dir
        assert a != b and a.parent == b.parent
    finally:
        other.kill()


def files_holding(folder: Path, text: str) -> list[str]:
    """Every regular file under `folder` whose bytes hold `text` (FIFOs are not read: they
    keep nothing once nobody holds them open)."""
    found = []
    for path in folder.rglob("*"):
        try:
            if stat.S_ISREG(path.lstat().st_mode) and text.encode() in path.read_bytes():
                found.append(path.name)
        except OSError:
            pass
    return found


def prompt_pane(server, tmp_path, marker: str) -> str:
    """A pane whose agent, once `go` exists (after the sidecar pipes it), shows a prompt
    whose line holds `marker`."""
    from tmux_agentstate.core.fixtures import load_index
    fx = next(f for f in load_index()
              if f.agent == "claude" and f.state == "blocked" and f.kind == "command-approval")
    raw = tmp_path / "prompt.raw"
    raw.write_bytes(fx.path.read_bytes() + f"\x1b[1;1HDo you want to proceed? {marker}".encode())
    go = tmp_path / "go"
    return server.new_pane(f"env AGENTSTATE_AGENT=claude sh -c 'stty raw -echo; "
                           f"while [ ! -e {go} ]; do sleep 0.05; done; cat {raw}; exec sleep 600'",
                           rows=fx.rows, cols=fx.cols)


@pytest.mark.parametrize("sidecar_at_the_end", ["stopped", "running"])
def test_no_prompt_text_outlives_the_server(tmux_server, tmp_path, sidecar_at_the_end):
    """The runtime folder goes with its server. A running sidecar removes it when the server
    ends; a stopped one cannot, so `stop` leaves no pane text in it (status, a pane's last bytes
    for `report`; the log never holds prompt lines) and the next command, whichever, prunes the
    folder of the ended server."""
    srv = tmux_server
    marker = f"PROMPT-TEXT-{os.getpid()}-{sidecar_at_the_end}"
    folder = Runtime(srv.tmux.socket()).dir
    pane = prompt_pane(srv, tmp_path, marker)
    assert cli("start", "-L", srv.name).returncode == 0
    wait_for(lambda: srv.option(pane, "pane_pipe") == "1", timeout=15, message="the pane piped")
    (tmp_path / "go").touch()
    wait_for(lambda: srv.state(pane) == "blocked", timeout=15, message="the prompt seen")
    assert marker in srv.option(pane, "@agentstate_detail")
    # the pane's last bytes, as `report` asks the sidecar for them (into the runtime folder)
    report = cli("report", pane, "-L", srv.name, "--into", str(tmp_path / "reports"))
    assert report.returncode == 0, report.stderr
    assert any(marker.encode() in p.read_bytes() for p in (tmp_path / "reports").rglob("recent.raw"))
    wait_for(lambda: (Runtime(srv.tmux.socket()).read_status() or {}).get("panes"),
             message="the status file names the pane")
    if sidecar_at_the_end == "stopped":
        assert cli("stop", "-L", srv.name).returncode == 0
    srv.kill()
    if sidecar_at_the_end == "running":
        wait_for(lambda: not folder.exists(), message="the sidecar removes its folder")
        return
    assert folder.exists() and not files_holding(folder, marker), files_holding(folder, marker)
    assert cli("manifests", "list").returncode == 0  # any command, one with no server at all
    assert not folder.exists()
