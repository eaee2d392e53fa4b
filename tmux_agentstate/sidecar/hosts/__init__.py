"""Remote hosts: one SSH link per host in `@agentstate-hosts` to that host's
`tmux-agentstate stream` (core/hostproto.py), and what the local side keeps of them.

    files.py  hosts.json (every host's link and rows, for `list`, `popup`, `next`, `hosts`,
              `doctor`) and hosts.sock (requests to a host: answer, focus) in the runtime folder
    links.py  Hosts: the links to every host, configured from the three options; writes
              hosts.json, serves hosts.sock
    link.py   HostLink: one host's link and what it said (a thread each, reconnecting)
    session.py one SSH session: the ssh process, its lines read with a deadline, bounded
    why.py    why a link ended, in one line with its fix
    serve.py  hosts.sock's server: a request relayed over its host's link
    follow.py the sidecar's part: the options followed through a control-mode subscription
"""


def __getattr__(name: str):
    """`Hosts`, imported when asked: the commands import files.py alone (no threads, no
    subprocess machinery on every `list`)."""
    if name == "Hosts":
        from .links import Hosts
        return Hosts
    raise AttributeError(name)
