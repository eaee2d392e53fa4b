"""The test sshd itself: a login reaches our command and that host's own default tmux server;
a host whose key is unknown is refused (what the remote-host tests build on)."""
from sshd import RemoteTmux, sshd  # noqa: F401  (the fixture)


def test_a_login_reaches_our_command_and_that_hosts_own_tmux(sshd, tmp_path):
    r1, r2 = RemoteTmux(tmp_path / "r1"), RemoteTmux(tmp_path / "r2")
    try:
        r2.cmd("new-session", "-d", "-s", "other")
        sshd.host("h1", tmpdir=r1.tmpdir)
        sshd.host("h2", tmpdir=r2.tmpdir)
        from sshd import REMOTE_COMMAND
        out = sshd.run("h1", f"{REMOTE_COMMAND} --version")
        assert out.returncode == 0 and out.stdout.startswith("tmux-agentstate "), out
        assert sshd.run("h1", "tmux list-sessions -F '#S'").stdout.split() == ["main"]
        assert sorted(sshd.run("h2", "tmux list-sessions -F '#S'").stdout.split()) == ["main", "other"]
    finally:
        r1.kill()
        r2.kill()


def test_an_unknown_host_key_is_refused(sshd):
    sshd.host("stranger", known=False)
    out = sshd.run("stranger", "true")
    assert out.returncode == 255 and "Host key verification failed" in out.stderr, out
