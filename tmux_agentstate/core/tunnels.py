"""Whether a pane's foreground is an SSH-like client: a terminal that shows another machine's
(or container's) programs, whose agent we can only see on the screen. Pure: it reads a
foreground as procs.Foreground gives it (leader name, command line, children one level down).

The kinds: `ssh` (an interactive login, also through `autossh` or `sshpass`), `mosh`,
`et` (Eternal Terminal), `docker` / `podman` (`exec` with a tty), `kubectl` (`exec -it`).
A client that runs no terminal (`ssh -N` port forwarding, `ssh -f`, `ssh -O check`, a remote
command without `-t`, `docker exec` without `-t`) is none: nothing it prints is a screen.
ssh run by git, scp or rsync is not the foreground leader (they are), and wrappers are looked
into only when they are known to hand the terminal to ssh.
"""
from __future__ import annotations

from pathlib import PurePosixPath

KINDS = ("ssh", "mosh", "et", "docker", "podman", "kubectl")

# ssh(1): the options that take an argument; every other letter is a flag
_SSH_ARG = set("BbcDEeFIiJLlmOoPpQRSWw")
# flags after which ssh runs no interactive terminal: -N no command, -f background, -O a
# control command, -V/-G print and exit, -W stdio forwarding, -Q a query, -s a subsystem,
# -T no tty. (-O, -W and -Q take an argument; their presence is enough.)
_SSH_NOT_A_TERMINAL = set("NfOVGWQsT")
# programs that run ssh with the user's terminal (their child, one level down)
_SSH_WRAPPERS = ("autossh", "sshpass")
# their own options (→ takes an argument); every other one is ssh's
_AUTOSSH_OWN = {"-M": True, "-f": False, "-V": False}
_SSHPASS_OWN = {"-p": True, "-f": True, "-d": True, "-P": True, "-e": False, "-v": False}

_DOCKER_GLOBAL_ARG = {"-H", "--host", "-c", "--context", "--config", "-l", "--log-level",
                      "--tlscacert", "--tlscert", "--tlskey", "--url", "--identity",
                      "--connection", "--root", "--runroot", "--storage-driver", "--cgroup-manager"}
_DOCKER_EXEC_ARG = {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir",
                    "--detach-keys", "--preserve-fds"}
_KUBECTL_GLOBAL_ARG = {"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "--user",
                       "-s", "--server", "--token", "--as", "--as-group", "--request-timeout",
                       "-v", "--v", "--cache-dir", "--certificate-authority",
                       "--client-certificate", "--client-key", "--tls-server-name"}
_KUBECTL_EXEC_ARG = {"-c", "--container", "-f", "--filename", "--pod-running-timeout"}


def _base(name: str, argv: tuple[str, ...] | list[str]) -> set[str]:
    """The names a process goes by: its own, and its argv[0]'s file name."""
    names = {name}
    if argv:
        names.add(PurePosixPath(argv[0]).name)
    return names


def ssh_interactive(args: list[str] | tuple[str, ...]) -> bool:
    """ssh's arguments (after argv[0]): does it run a terminal on the far side? A destination
    and no flag that says otherwise; with a remote command only when a tty is forced (-t or
    RequestTTY)."""
    flags: set[str] = set()
    request_tty = None
    positional: list[str] = []
    i, args = 0, list(args)
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            positional += args[i:]
            break
        if not a.startswith("-") or a == "-":
            if positional:  # the command: ssh parses no option after it
                positional += args[i - 1:]
                break
            positional.append(a)  # the destination; ssh reads options after it too
            continue
        j = 1
        while j < len(a):
            letter = a[j]
            j += 1
            if letter in _SSH_ARG:
                value = a[j:] if j < len(a) else (args[i] if i < len(args) else "")
                if j >= len(a):
                    i += 1
                if letter == "o":
                    key, _, val = value.replace("=", " ", 1).partition(" ")
                    if key.strip().lower() == "requesttty":
                        request_tty = val.strip().lower()
                    elif key.strip().lower() in ("sessiontype",) and val.strip().lower() == "none":
                        flags.add("N")
                flags.add(letter)
                break
            flags.add(letter)
    if not positional or flags & _SSH_NOT_A_TERMINAL or request_tty == "no":
        return False
    command = positional[1:]
    return not command or "t" in flags or request_tty in ("yes", "force")


def _after_wrapper(args: list[str], own: dict[str, bool]) -> tuple[list[str], set[str]]:
    """A wrapper's command line with its own options taken off (`own`: option → takes an
    argument): what it hands to ssh, and the wrapper's own options that were given."""
    i, given = 0, set()
    while i < len(args) and args[i][:2] in own:
        a = args[i]
        i += 1
        given.add(a[:2])
        if own[a[:2]] and len(a) == 2:
            i += 1  # the option's argument is the next word
    if i < len(args) and args[i] == "--":
        i += 1
    return args[i:], given


def _ssh_kind(name: str, cmdline: tuple[str, ...]) -> bool:
    return "ssh" in _base(name, cmdline) and ssh_interactive(cmdline[1:])


def _wrapped_ssh(name: str, cmdline: tuple[str, ...], children) -> bool:
    """autossh / sshpass in front, ssh one level down: the child's own arguments when it is
    there (autossh restarts it), else the wrapper's, its own options taken off."""
    names = _base(name, cmdline)
    for child_name, child_cmd in children:
        if "ssh" in _base(child_name, child_cmd):
            return ssh_interactive(child_cmd[1:])
    args = list(cmdline[1:])
    if "autossh" in names:
        rest, given = _after_wrapper(args, _AUTOSSH_OWN)
        return "-f" not in given and ssh_interactive(rest)  # -f: autossh in the background
    rest, _ = _after_wrapper(args, _SSHPASS_OWN)
    return bool(rest) and _ssh_kind(rest[0], tuple(rest))


def _container_exec(args: list[str], global_arg: set[str], exec_arg: set[str],
                    need_stdin: bool, interspersed: bool = False) -> bool:
    """`docker|podman [global options] [container] exec [options] TARGET COMMAND…` and
    `kubectl [global options] exec [options] POD [-- COMMAND…]`: does it run with a tty
    (and, for kubectl, stdin: `-t` alone attaches no keyboard)?"""
    i = 0
    while i < len(args) and args[i].startswith("-"):  # global options
        a = args[i]
        i += 1
        if a in global_arg:
            i += 1
    if i < len(args) and args[i] == "container":
        i += 1
    if i >= len(args) or args[i] != "exec":
        return False
    found = {"tty": False, "stdin": False, "detach": False}
    longs = {"--tty": "tty", "--interactive": "stdin", "--stdin": "stdin", "--detach": "detach"}
    shorts = {"t": "tty", "i": "stdin", "d": "detach"}
    i += 1
    target = False
    while i < len(args) and args[i] != "--":
        a = args[i]
        i += 1
        if not a.startswith("-") or a == "-":
            target = True
            if interspersed:
                continue  # kubectl reads flags after the pod name too
            break
        if a.startswith("--"):
            key, eq, value = a.partition("=")
            if key in longs:
                found[longs[key]] = value.lower() not in ("false", "0") if eq else True
            elif key in exec_arg and not eq:
                i += 1  # its value is the next word
            continue
        for k, letter in enumerate(a[1:], 1):
            if f"-{letter}" in exec_arg:
                i += 0 if a[k + 1:] else 1  # the value: the rest of the word, or the next
                break
            if letter in shorts:
                found[shorts[letter]] = True
    if not target:
        return False  # no container or pod named: an error, not a terminal
    return found["tty"] and not found["detach"] and (found["stdin"] or not need_stdin)


def tunnel_kind(name: str, cmdline: tuple[str, ...] | list[str],
                children: tuple = ()) -> str | None:
    """The kind of SSH-like client a foreground is (see KINDS), or None."""
    cmdline = tuple(cmdline)
    names = _base(name, cmdline)
    if "ssh" in names:
        return "ssh" if _ssh_kind(name, cmdline) else None
    if names & set(_SSH_WRAPPERS):
        return "ssh" if _wrapped_ssh(name, cmdline, children) else None
    if names & {"mosh-client", "mosh"}:
        # mosh (a Perl script) execs mosh-client once the far side answers; `mosh --help`,
        # `--version` run no terminal
        return None if any(a in ("-h", "--help", "--version", "-v") for a in cmdline[1:]) \
            else "mosh"
    if "et" in names:
        args = cmdline[1:]
        if any(a in ("-h", "--help", "--version", "-N", "--noterminal") for a in args):
            return None
        positional = [a for k, a in enumerate(args) if not a.startswith("-")
                      and not (k and args[k - 1] in ("-c", "--command", "-t", "--tunnel", "-r",
                                                     "--reversetunnel", "-p", "--port",
                                                     "--jumphost", "--jport", "-u", "--macserver",
                                                     "--serverfifo", "-l", "--logdir", "-v",
                                                     "--verbose", "--prefix", "--ssh-option"))]
        return "et" if positional else None
    for kind, global_arg, exec_arg, need_stdin in (
            ("docker", _DOCKER_GLOBAL_ARG, _DOCKER_EXEC_ARG, False),
            ("podman", _DOCKER_GLOBAL_ARG, _DOCKER_EXEC_ARG, False),
            ("kubectl", _KUBECTL_GLOBAL_ARG, _KUBECTL_EXEC_ARG, True)):
        if kind in names:
            return kind if _container_exec(list(cmdline[1:]), global_arg, exec_arg,
                                           need_stdin, interspersed=need_stdin) else None
    return None


def foreground_tunnel(fg) -> str | None:
    """tunnel_kind of a procs.Foreground (None for None)."""
    if fg is None:
        return None
    return tunnel_kind(fg.name, fg.cmdline, fg.children)
