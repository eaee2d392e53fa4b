"""Remote hosts: one SSH link per host in `@agentstate-hosts` to that host's
`tmux-agentstate stream` (core/hostproto.py), and what the local side keeps of them.

    files.py  hosts.json (every host's link and rows, for `list`, `popup`, `next`, `hosts`,
              `doctor`) and hosts.sock (requests to a host: answer, focus) in the runtime folder
"""
