"""core/tunnels.py: which foregrounds are SSH-like clients (a terminal onto another machine or
container), over real command lines, both ways."""
import shlex

import pytest

from tmux_agentstate.core.tunnels import ssh_interactive, tunnel_kind


def kind(line: str, children: tuple = ()) -> str | None:
    argv = tuple(shlex.split(line))
    return tunnel_kind(argv[0].rsplit("/", 1)[-1], argv, children)


TUNNELS = [
    ("ssh dev", "ssh"),
    ("ssh user@dev.example.com", "ssh"),
    ("/usr/bin/ssh -p 2222 -i ~/.ssh/id_ed25519 dev", "ssh"),
    ("ssh -p2222 -A dev", "ssh"),
    ("ssh -J bastion dev", "ssh"),
    ("ssh -F /tmp/cfg h1", "ssh"),
    ("ssh -o ServerAliveInterval=30 -o StrictHostKeyChecking=no dev", "ssh"),
    ("ssh -oServerAliveInterval=30 dev", "ssh"),
    ("ssh -t dev tmux attach", "ssh"),
    ("ssh -tt dev 'cd /srv && claude'", "ssh"),
    ("ssh dev -t tmux new -A -s main", "ssh"),
    ("ssh -o RequestTTY=yes dev htop", "ssh"),
    ("ssh -o 'RequestTTY force' dev codex", "ssh"),
    ("ssh -L 8080:localhost:8080 dev", "ssh"),  # forwarding *and* a login
    ("ssh -X -C dev", "ssh"),
    ("ssh -46 -vvv dev", "ssh"),
    ("ssh -- dev", "ssh"),
    ("autossh -M 0 dev", "ssh"),
    ("autossh -M 20000 -t dev tmux attach", "ssh"),
    ("sshpass -p secret ssh dev", "ssh"),
    ("sshpass -e ssh -p 22 dev", "ssh"),
    ("mosh-client 192.168.1.5 60001", "mosh"),
    ("mosh dev", "mosh"),
    ("mosh --ssh='ssh -p 2222' dev -- tmux attach", "mosh"),
    ("et dev:8080", "et"),
    ("et -c 'tmux attach' user@dev", "et"),
    ("docker exec -it web bash", "docker"),
    ("docker exec -ti web sh", "docker"),
    ("docker exec -i -t web bash", "docker"),
    ("docker exec --interactive --tty web bash", "docker"),
    ("docker exec -t web top", "docker"),
    ("docker exec -it -u root -w /srv web bash", "docker"),
    ("docker exec -it -e TERM=xterm web claude", "docker"),
    ("docker exec --user=root -it web bash", "docker"),
    ("docker --context remote exec -it web bash", "docker"),
    ("docker -H ssh://dev exec -it web bash", "docker"),
    ("docker container exec -it web bash", "docker"),
    ("/usr/bin/docker exec --tty=true -i web bash", "docker"),
    ("podman exec -it toolbox bash", "podman"),
    ("podman exec --interactive --tty dev zsh", "podman"),
    ("kubectl exec -it api-0 -- bash", "kubectl"),
    ("kubectl exec --stdin --tty api-0 -- /bin/sh", "kubectl"),
    ("kubectl -n prod exec -ti api-0 -c app -- bash", "kubectl"),
    ("kubectl exec api-0 -it -- bash", "kubectl"),  # flags after the pod
    ("kubectl --context staging exec -i -t deploy/api -- sh", "kubectl"),
]

NOT_TUNNELS = [
    "ssh",                                    # no destination: prints its usage
    "ssh -V",
    "ssh -G dev",                             # prints the configuration
    "ssh -N -L 5432:db:5432 dev",             # forwarding only
    "ssh -fN -D 1080 dev",
    "ssh -f dev sleep 60",
    "ssh -O check dev",
    "ssh -O exit dev",
    "ssh -W db:22 bastion",                   # a ProxyCommand's stdio
    "ssh -Q cipher",
    "ssh -s dev sftp",                        # a subsystem
    "ssh -T git@github.com",
    "ssh dev uptime",                         # a command without a tty
    "ssh dev 'cat /var/log/syslog'",
    "ssh -o RequestTTY=no dev",
    "ssh -o SessionType=none dev",
    "ssh dev -N",                             # options after the destination count
    "autossh -M 0 -f -N -L 8080:localhost:80 dev",
    "autossh -M 0 -N -R 2222:localhost:22 dev",
    "sshpass -p secret scp file dev:",
    "scp file dev:/tmp/",
    "rsync -av -e ssh src/ dev:dst/",
    "git push origin main",
    "git fetch",
    "sftp dev",
    "mosh --version",
    "et --help",
    "et -N dev",
    "docker exec web ls",                     # no tty
    "docker exec -i web cat",                 # stdin only
    "docker exec -d web sleep 100",
    "docker exec -dit web bash",              # detached
    "docker exec --tty=false -i web bash",
    "docker exec -it",                        # no container: an error
    "docker ps",
    "docker run -it ubuntu bash",             # not `exec`
    "docker logs -f web",
    "podman exec toolbox ls",
    "kubectl exec api-0 -- ls",
    "kubectl exec -t api-0 -- top",           # a tty but no keyboard
    "kubectl logs -f api-0",
    "kubectl get pods -w",
    "bash",
    "vim notes.txt",
    "python3 -m http.server",
    "sshd -D",
    "ssh-agent bash",
    "claude",
]


@pytest.mark.parametrize("line, expected", TUNNELS, ids=[t[0] for t in TUNNELS])
def test_ssh_like_clients_are_tunnels(line, expected):
    assert kind(line) == expected


@pytest.mark.parametrize("line", NOT_TUNNELS)
def test_other_foregrounds_are_not(line):
    assert kind(line) is None


def test_wrappers_are_read_through_their_ssh_child():
    ssh = ("ssh", ("/usr/bin/ssh", "-p", "22", "dev"))
    assert kind("autossh -M 0 dev", (ssh,)) == "ssh"
    forwarding = ("ssh", ("/usr/bin/ssh", "-N", "-L", "80:x:80", "dev"))
    assert kind("autossh -M 0 dev", (forwarding,)) is None  # the child says what it does


def test_ssh_run_by_another_program_is_not_its_foreground():
    """git, scp, rsync run ssh as a child in their own group: the leader is what is in front,
    and none of them is a terminal."""
    ssh = ("ssh", ("ssh", "git@github.com", "git-receive-pack 'x.git'"))
    for line in ("git push", "scp a dev:", "rsync -a a dev:b"):
        assert kind(line, (ssh,)) is None


def test_a_leader_named_like_ssh_by_its_argv0_only():
    """A process renamed (argv[0] a path) is still read by its file name."""
    assert tunnel_kind("ssh", ("/usr/local/bin/ssh", "dev")) == "ssh"
    assert tunnel_kind("ssh", ()) is None  # no command line: cannot tell, no tunnel


@pytest.mark.parametrize("args, expected", [
    (["dev"], True), (["-t", "dev", "x"], True), (["dev", "x"], False), (["-N", "dev"], False),
    (["-ldev", "host"], True), (["-l", "dev", "host", "cmd"], False), ([], False),
])
def test_ssh_interactive(args, expected):
    assert ssh_interactive(args) is expected
