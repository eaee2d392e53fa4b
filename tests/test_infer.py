"""core/infer.py: the agent an ssh pane shows, inferred from its screen with hysteresis, over
the whole fixture corpus (real captures of real agents) and over what must never make an
agent: `cat` of a transcript, a log scrolling past, a shell back in front."""
import functools

import pytest

from tmux_agentstate.core.catalog import Catalog
from tmux_agentstate.core.fixtures import load_index
from tmux_agentstate.core.infer import (ADOPT, DROP, Inference, is_tmux_status, present,
                                        prompt_at_cursor, without_tmux_status)
from tmux_agentstate.core.manifest import parse_manifest
from tmux_agentstate.core.screen import PaneScreen, ScreenView, replay

FIXTURES = load_index()
CATALOG = Catalog(dirs=[Catalog().dirs[0]])  # the bundled manifests only
MANIFESTS = list(CATALOG.by_name.values())
PROMPT = "user@dev:~/src$ "


@functools.lru_cache(maxsize=None)
def _view(path, rows, cols) -> ScreenView:
    return replay(path.read_bytes(), rows, cols).view()


def view_of(f) -> ScreenView:
    v = _view(f.path, f.rows, f.cols)
    return ScreenView(list(v.rows), v.cursor_row, v.title, v.osc_state)  # a fresh cache


def shell_screen(rows: int, cols: int, *outputs: str) -> PaneScreen:
    """A shell that ran commands printing `outputs`, its prompt back after each."""
    screen = PaneScreen(rows, cols)
    screen.feed(PROMPT.encode())
    for text in outputs:
        body = text.rstrip("\n").replace("\n", "\r\n")
        screen.feed(f"cat transcript.screen.txt\r\n{body}\r\n{PROMPT}".encode())
    return screen


def test_no_capture_is_ever_taken_for_another_agent():
    wrong = []
    for f in FIXTURES:
        for adopted in (None, f.agent):
            got = present(MANIFESTS, view_of(f), adopted)
            if got is not None and got.name != f.agent:
                wrong.append((f.id, adopted, got.name))
    assert not wrong


def test_most_captures_are_seen_and_the_adopted_agent_stays_seen():
    """Cold (one look, nothing adopted) the distinctive screens are found; once adopted its
    own rules keep an agent present on nearly every screen it draws (figures in the report:
    scripts/infer_fixtures.py)."""
    cold = sum(present(MANIFESTS, view_of(f)) is not None for f in FIXTURES)
    kept = sum(present(MANIFESTS, view_of(f), f.agent) is not None for f in FIXTURES)
    assert cold >= 0.7 * len(FIXTURES) and kept >= 0.95 * len(FIXTURES), (cold, kept)


def test_an_adopted_agent_waiting_at_any_of_its_prompts_stays_seen():
    """A blocked agent waits as long as the user is away: none of its dialogs may look like
    its absence (dropping it would drop the prompt), wherever the dialog parks the cursor."""
    lost = [f.id for f in FIXTURES if f.state == "blocked"
            and present(MANIFESTS, view_of(f), f.agent) is None]
    assert not lost


@pytest.mark.parametrize("prompt", ["root@vm:~# ", "user@dev:~/src$ ", "bash-5.1$ ",
                                    "➜  src git:(main) ", "me@box ~> "])
def test_the_shell_back_after_the_agent_is_its_absence(prompt):
    """The agent's last screen still up, the far side's shell prompting under it: absent,
    even for the agent adopted."""
    wrong = []
    for f in FIXTURES[::7]:
        screen = replay(f.path.read_bytes(), f.rows, f.cols)
        # it leaves its screen as it is, the cursor under it (main screen), the shell prompts
        screen.feed(f"\x1b[?1049l\x1b[{f.rows};1H\r\n{prompt}".encode())
        if present(MANIFESTS, screen.view(), f.agent) is not None:
            wrong.append(f.id)
    assert not wrong


def test_cat_of_any_transcript_is_nobody():
    """The transcript's agent-looking rows all sit above the shell's prompt and cursor."""
    wrong = []
    for f in FIXTURES:
        text = f.path.with_suffix(".screen.txt")
        if text.exists():
            got = present(MANIFESTS, shell_screen(f.rows, f.cols, text.read_text()).view())
            if got is not None:
                wrong.append((f.id, got.name))
    assert not wrong


@pytest.mark.parametrize("step", ["bytes", "lines"])
def test_a_long_log_scrolling_past_is_never_adopted(step):
    """Every claude and codex transcript, one after the other, arriving in chunks looked at
    every 0.1 s (cut anywhere, or at line ends: the cursor then waits on a blank row under
    agent-looking text): however agent-like a look, the text moves, and nothing is adopted."""
    text = "".join(f.path.with_suffix(".screen.txt").read_text() + "\n"
                   for f in FIXTURES if f.agent in ("claude", "codex")
                   and f.path.with_suffix(".screen.txt").exists())
    if step == "bytes":
        data = text.replace("\n", "\r\n").encode()
        chunks = [data[at:at + 1500] for at in range(0, len(data), 1500)]
    else:
        lines = [line + "\r\n" for line in text.split("\n")]
        chunks = ["".join(lines[at:at + 7]).encode() for at in range(0, len(lines), 7)]
    screen, inference, now = PaneScreen(30, 100), Inference(), 0.0
    for n, chunk in enumerate(chunks):
        screen.feed(chunk)
        now += 0.1
        inference.look(MANIFESTS, screen.view(), now)
        assert inference.adopted is None, f"adopted {inference.adopted.name} at chunk {n}"


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "opencode", "aider"])
def test_a_steady_agent_is_adopted_after_adopt_seconds_and_dropped_after_drop(agent):
    f = next(f for f in FIXTURES if f.agent == agent and present(MANIFESTS, view_of(f)))
    screen = replay(f.path.read_bytes(), f.rows, f.cols)
    inference = Inference()
    assert not inference.look(MANIFESTS, screen.view(), 100.0)
    assert inference.adopted is None  # one look is not enough
    inference.look(MANIFESTS, None, 100.0 + ADOPT / 2)
    assert inference.adopted is None
    assert inference.look(MANIFESTS, None, 100.0 + ADOPT)  # time alone adopts it
    assert inference.adopted.name == agent
    # the agent exits: the terminal reset, the shell's prompt
    screen.feed(b"\x1b[?1049l\x1bc" + PROMPT.encode())
    assert not inference.look(MANIFESTS, screen.view(), 110.0)
    assert inference.adopted.name == agent  # a while without it is not yet gone
    inference.look(MANIFESTS, None, 110.0 + DROP / 2)
    assert inference.adopted.name == agent
    assert inference.look(MANIFESTS, None, 110.0 + DROP)
    assert inference.adopted is None


def test_a_flicker_of_another_screen_does_not_drop_the_adopted_agent():
    f = next(f for f in FIXTURES if f.agent == "claude" and f.state == "blocked"
             and present(MANIFESTS, view_of(f)))
    inference = Inference()
    inference.look(MANIFESTS, view_of(f), 0.0)
    inference.look(MANIFESTS, None, ADOPT)
    assert inference.adopted.name == "claude"
    blank = ScreenView([""] * f.rows, 0, "", "")
    inference.look(MANIFESTS, blank, ADOPT + 1)   # a full redraw: cleared, then drawn again
    inference.look(MANIFESTS, view_of(f), ADOPT + 1.2)
    inference.look(MANIFESTS, None, ADOPT + 1 + DROP * 2)
    assert inference.adopted.name == "claude"


def test_two_agents_that_tie_are_nobody():
    def twin(name: str):
        return parse_manifest({"name": name, "identify": {"screen": ["Shared Banner v1"]},
                               "rules": [{"id": "input", "state": "idle", "region": "bottom",
                                          "rows": 2, "any": ["^> "]}]}, f"{name}.toml")
    view = ScreenView(["Shared Banner v1", "", "> "], 2, "", "")
    assert present([twin("one")], view).name == "one"
    assert present([twin("one"), twin("two")], view) is None


@pytest.mark.parametrize("row", ["user@dev:~/src$ ", "root@vm:~# ", "host1% ", "web-01% ",
                                 "me@box ~> "])
def test_shell_prompts_are_prompts(row):
    assert prompt_at_cursor(ScreenView(["some output", row], 1, "", ""))


@pytest.mark.parametrize("row", ["                                   context: 0.9%",
                                 "ctx:12%", "Downloading 45.5% ", "done 100%"])
def test_a_percentage_ending_a_row_is_no_prompt(row):
    """A status bar's figure (Kimi CLI's 'context: 0.9%' when the model's size is unknown)
    ends in '%' like zsh's 'host% ': a number standing alone is no prompt."""
    assert not prompt_at_cursor(ScreenView(["some output", row], 1, "", ""))


def test_an_adopted_agent_with_the_cursor_on_its_context_row_stays_seen():
    """Kimi CLI's last row is its context figure; prompt_toolkit can leave the cursor there
    while it redraws: the adopted agent is still there, not a shell's prompt."""
    rows = ["✨ fix the tests", "", "• Done.", "", "── input " + "─" * 71, "", "",
            "─" * 80, "agent (mock-model ○)  ~/src/webshop  main [±]",
            " " * 67 + "context: 0.9%"]
    kimi = CATALOG.get("kimi")
    view = ScreenView(rows, len(rows) - 1, "", "")
    assert present(MANIFESTS, view, "kimi") is kimi


STATUS_LINES = [
    '[main] 0:bash* 1:vim-                                          "dev" 12:01 06-Dec-26',
    "[0] 0:zsh- 1:claude*Z 2:logs#",
    " 0:zsh  1:claude*MZ  2:logs",
    " 0:bash  1:claude*  2:htop-",
]
NOT_STATUS = [
    "> fix the tests in src/app.py",
    "  ⏵⏵ accept edits on (shift+tab to cycle)",
    "[main] refactor the parser",
    "Step 1:read* the file",
    "  1:foo* bar",
]


@pytest.mark.parametrize("row", STATUS_LINES)
def test_tmux_status_lines_are_recognised(row):
    assert is_tmux_status(row)


@pytest.mark.parametrize("row", NOT_STATUS)
def test_other_rows_are_not_status_lines(row):
    assert not is_tmux_status(row)


@pytest.mark.parametrize("where", ["bottom", "top"])
def test_a_nested_tmux_is_read_as_what_it_shows(where):
    """Every capture inside a nested tmux with its status line: the same verdict and the same
    inferred agent as the capture alone."""
    status = STATUS_LINES[0]
    differ = []
    for f in FIXTURES:
        view = view_of(f)
        if where == "bottom":
            nested = ScreenView(view.rows + [status], view.cursor_row, view.title, view.osc_state)
        else:
            nested = ScreenView([status] + view.rows, view.cursor_row + 1, view.title,
                                view.osc_state)
        inner = without_tmux_status(nested)
        m = CATALOG.get(f.agent)
        if (m.evaluate(inner).state != m.evaluate(view).state
                or present(MANIFESTS, inner) != present(MANIFESTS, view)):
            differ.append(f.id)
    assert not differ


@pytest.mark.parametrize("row", ["0:MM* " * 40 + "@", " " + "1:a*# " * 40 + "x:",
                                 "[s] " + "0:a*Z- " * 40, "0:" + "*" * 300, " 1:" * 200 + "*",
                                 " 1" * 300 + "%", ":" + "1" * 600 + ".%"])
def test_a_hostile_row_is_read_in_linear_time(row):
    """The far side's text is anyone's: a row built to make a backtracking pattern explode
    is read like any other (this test hangs, and fails by the CI's timeout, if it is not)."""
    is_tmux_status(row)
    without_tmux_status(ScreenView([row] * 60, 59, "", ""))
    prompt_at_cursor(ScreenView([row] * 60, 59, "", ""))
