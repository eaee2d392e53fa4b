"""Which agent is in a pane: no agent's process or screen is taken for another's.

Forks share a lot (Qwen Code forks Gemini CLI, Kilo Code forks opencode), and npm shims all run
as `node`, so identity is checked across every bundled manifest at once, not one at a time."""
import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.screen import replay

CATALOG = Catalog([BUNDLED_DIR])
FIXTURES = load_index()

# (agent or None, process name, argv) as `ps` shows the pane's foreground process for a real
# install (see each agent's harness/NOTES-*.md); None: no agent.
PROCESSES = [
    ("claude", "claude", ["claude"]),
    ("claude", "claude", ["/root/.local/share/claude/versions/2.1.332"]),
    ("claude", "node", ["node", "/work/agents/claude-2.0.77/node_modules/.bin/claude"]),
    ("codex", "node", ["node", "/usr/lib/node_modules/@openai/codex/bin/codex.js"]),
    ("codex", "node", ["node", "/work/agents/codex-0.171.0/node_modules/.bin/codex", "-c", "x=1"]),
    ("codex", "codex", ["/work/agents/codex/node_modules/@openai/codex-linux-x64/vendor/"
                        "x86_64-unknown-linux-musl/codex/codex"]),
    ("aider", "python3.11", ["/work/agents/aider-0.86.2/bin/python3.11",
                             "/work/agents/aider-0.86.2/bin/aider", "--model", "openai/mock"]),
    ("aider", "python3", ["python3", "-m", "aider", "--no-git"]),
    ("opencode", "opencode", ["/work/agents/opencode-1.18.33/node_modules/.bin/opencode"]),
    ("opencode", "opencode.exe", ["/x/node_modules/opencode-ai/bin/opencode.exe"]),
    ("gemini", "node", ["node", "--max-old-space-size=8192",
                        "/work/agents/gemini-0.61.0/node_modules/.bin/gemini"]),
    ("gemini", "node", ["node", "/x/node_modules/@google/gemini-cli/bundle/gemini.js"]),
    ("qwen", "node", ["node", "/work/agents/qwen-0.15.0/node_modules/.bin/qwen",
                      "--approval-mode", "default"]),
    ("pi", "pi", ["pi"]),
    ("pi", "node", ["node", "/x/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"]),
    ("copilot", "node", ["node", "/work/agents/copilot-1.0.102/node_modules/.bin/copilot"]),
    ("copilot", "node", ["node", "/usr/lib/node_modules/@github/copilot/npm-loader.js"]),
    ("copilot", "MainThread", ["/work/agents/copilot-1.0.102/node_modules/@github/copilot-linux-x64/"
                               "copilot"]),
    ("copilot", "copilot", ["copilot", "--banner"]),
    ("kilo", "node", ["node", "/work/agents/kilo-7.7.7/node_modules/.bin/kilo"]),
    ("kilo", ".kilo", ["/work/agents/kilo-7.7.7/node_modules/@kilocode/cli/bin/.kilo"]),
    ("kilo", "kilocode", ["kilocode"]),
    ("grok", "node", ["node", "/work/agents/grok-0.0.34/node_modules/.bin/grok"]),
    ("grok", "node", ["node", "/usr/lib/node_modules/@vibe-kit/grok-cli/dist/index.js", "-d", "."]),
    ("cline", "cline", ["/work/agents/cline-3.0.65/node_modules/.bin/cline", "--auto-approve", "false"]),
    ("cline", "cline", ["/x/node_modules/@cline/cli-linux-x64/bin/cline"]),
    ("cline", "node", ["node", "/usr/lib/node_modules/cline/bin/cline"]),
    ("droid", "droid", ["/work/agents/droid-0.215.0/node_modules/.bin/droid"]),
    ("droid", "droid", ["droid", "exec", "--auto", "low"]),
    ("kimi", "Kimi Code", ["Kimi Code"] + [""] * 64),   # after its setproctitle (ps: comm and argv)
    ("kimi", "kimi", ["/work/agents/kimi-1.51.0/bin/python3.13", "/work/agents/kimi-1.51.0/bin/kimi"]),
    ("kimi", "python3.13", ["python3.13", "/root/.local/bin/kimi-cli", "--yolo"]),
    # a shebang script's process is named after the script (comm `hermes`, as Meta's engine's)
    ("hermes", "hermes", ["/work/agents/hermes-0.19.0/bin/python3.12",
                          "/work/agents/hermes-0.19.0/bin/hermes"]),
    ("hermes", "hermes", ["/root/.local/pipx/venvs/hermes-agent/bin/python", "/root/.local/bin/hermes",
                          "--tui"]),
    ("hermes", "python3", ["python3", "-m", "hermes_cli.main", "chat"]),
    ("hermes", "node", ["/usr/bin/node", "--expose-gc", "/work/agents/hermes-0.19.0/lib/python3.12/"
                        "site-packages/hermes_cli/tui_dist/entry.js"]),
    (None, "hermes", ["hermes", "bundle.js"]),  # Meta's Hermes JavaScript engine, not the agent
    (None, "hermes", ["/opt/hermes/bin/hermes", "-O", "-emit-binary", "-out", "app.hbc", "app.js"]),
    ("letta", "node", ["node", "/work/agents/letta-0.25.9/node_modules/.bin/letta", "--backend",
                       "local", "--permission-mode", "standard"]),
    ("letta", "node", ["node", "/usr/lib/node_modules/@letta-ai/letta-code/letta.js"]),
    (None, "letta", ["/opt/letta/bin/python3", "/opt/letta/bin/letta", "server"]),  # Letta's server
    ("vibe", "vibe-rs", ["/work/agents/vibe-3.0.3/lib/python3.12/site-packages/vibe/_bin/vibe-rs"]),
    ("vibe", "vibe-rs", ["vibe-rs", "--agent", "ask"]),
    ("vibe", "Vibe CLI", ["Vibe CLI" + " " * 40]),   # 2.x: the Python app renames itself (setproctitle)
    (None, "vibe-app-server", ["vibe-app-server"]),   # Vibe 3.x's back end, never the pane's process
    ("openhands", "openhands", ["/work/agents/openhands-1.16.0/bin/python3.12",
                                "/work/agents/openhands-1.16.0/bin/openhands", "--override-with-envs"]),
    ("openhands", "python3.12", ["/work/agents/openhands-1.16.0/bin/python3.12",
                                 "/work/agents/openhands-1.16.0/bin/openhands"]),
    (None, "python3.12", ["python3.12", "-m", "openhands.server.listen"]),
    (None, "uvicorn", ["/srv/oh/bin/python3", "/srv/oh/bin/uvicorn", "openhands.server.listen:app"]),
    (None, "android-studio", ["/opt/android-studio/bin/studio.sh"]),
    (None, "node", ["node", "/srv/app/node_modules/.bin/copilot-metrics-server"]),
    (None, "node", ["node", "/srv/app/node_modules/.bin/grokker"]),
    (None, "bash", ["-bash"]),
    (None, "node", ["node", "server.js"]),
    (None, "node", ["node", "/srv/app/node_modules/.bin/vite"]),
    (None, "python3", ["python3", "-m", "http.server"]),
    (None, "vim", ["vim", "codex.md"]),
    (None, "less", ["less", "/tmp/claude.log"]),
    (None, "python3", ["python3", "/opt/kimi-tools/bin/kimi-lint", "src"]),
    (None, "vim", ["vim", "/work/bin/kimi"]),
]


@pytest.mark.parametrize("agent,name,argv", PROCESSES, ids=[" ".join(p[2])[-60:] for p in PROCESSES])
def test_a_process_is_one_agent_or_none(agent, name, argv):
    hits = sorted(m.name for m in CATALOG.by_name.values() if m.identify.matches_process(name, argv))
    assert hits == ([agent] if agent else []), f"{name} {argv}: {hits}"


def test_every_agent_has_a_process_row():
    assert {p[0] for p in PROCESSES} - {None} == set(CATALOG.by_name)


def test_no_capture_is_inferred_as_another_agent():
    """`classify` without --agent infers the agent from the screen: each capture is its own
    agent's or no one's (a screen with no banner in view is fine; another agent's is not)."""
    wrong = []
    for fx in FIXTURES:
        inferred = CATALOG.infer(replay(fx.path.read_bytes(), fx.rows, fx.cols).view())
        if inferred is not None and inferred.name != fx.agent:
            wrong.append(f"{fx.id} -> {inferred.name}")
    assert not wrong, "\n".join(wrong)


def test_every_screen_and_title_pattern_fits_some_capture_of_its_agent():
    """A screen or title pattern none of its agent's real captures match is dead: written for a
    screen that never happens, or compiled unlike it was meant ('^' is a row's start)."""
    views: dict[str, list] = {}
    for fx in FIXTURES:
        views.setdefault(fx.agent, []).append(replay(fx.path.read_bytes(), fx.rows, fx.cols).view())
    dead = []
    for m in CATALOG.by_name.values():
        for kind in ("screen", "title"):
            for p in getattr(m.identify, kind):
                if not any(p.search(v.text if kind == "screen" else v.title) for v in views[m.name]):
                    dead.append(f"{m.name} identify.{kind} {p.regex.pattern!r}")
    assert not dead, "\n".join(dead)
