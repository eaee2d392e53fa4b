"""The user's keys are theirs: plugin.tmux loaded into a real tmux server after a real config
(source-file) binds the popup and next keys only where the user has not bound something else,
`''` binds nothing, `doctor` names a key it left alone, and `stop --clean` puts back exactly
what the prefix table held before."""
import os
import subprocess
import sys
from pathlib import Path

from conftest import wait_for

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = str(ROOT / "plugin.tmux")


def _cli(srv, run, *args):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(run))
    env.pop("TMUX", None)
    return subprocess.run([sys.executable, "-m", "tmux_agentstate", *args, "-L", srv.name],
                          capture_output=True, text=True, env=env)


def load_config(srv, tmp_path, text: str) -> None:
    """The user's tmux.conf, sourced as tmux sources it."""
    conf = tmp_path / "tmux.conf"
    conf.write_text(text)
    srv.cmd("source-file", str(conf))


def prefix_table(srv, notes=False) -> str:
    return srv.cmd("list-keys", *(["-N"] if notes else []), "-T", "prefix")


def key(srv, name) -> str:
    try:
        return srv.cmd("list-keys", "-T", "prefix", name)
    except RuntimeError:
        return ""


def clean(srv, run):
    wait_for(lambda: _cli(srv, run, "status").returncode == 0, timeout=20,
             message="sidecar running")  # so --clean also races nothing the sidecar writes
    out = _cli(srv, run, "stop", "--clean")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_key_the_user_bound_is_left_alone_named_by_doctor_and_all_restored(tmux_server, run_dir,
                                                                          tmp_path):
    srv = tmux_server
    load_config(srv, tmp_path, "set -g prefix C-a\nunbind C-b\nbind a send-prefix\n")
    before, before_notes = prefix_table(srv), prefix_table(srv, notes=True)
    srv.cmd("run-shell", PLUGIN)
    assert key(srv, "a") == "bind-key -T prefix a send-prefix"  # theirs, untouched
    assert "--popup" in key(srv, "A")  # the popup key was free: ours
    doctor = _cli(srv, run_dir, "doctor").stdout
    skipped = next(line for line in doctor.splitlines() if "prefix + a" in line)
    assert "send-prefix" in skipped and "set -g @agentstate-next-key" in skipped, skipped
    assert skipped.startswith("note"), skipped  # their choice: doctor stays healthy
    assert "prefix + A opens the agent list" in doctor
    srv.cmd("run-shell", PLUGIN)  # tmux.conf re-sourced: still theirs, ours rebound
    assert key(srv, "a") == "bind-key -T prefix a send-prefix" and "--popup" in key(srv, "A")
    clean(srv, run_dir)
    assert prefix_table(srv) == before and prefix_table(srv, notes=True) == before_notes


def test_empty_key_options_bind_nothing(tmux_server, run_dir, tmp_path):
    srv = tmux_server
    load_config(srv, tmp_path, "set -g @agentstate-popup-key ''\nset -g @agentstate-next-key ''\n")
    before = prefix_table(srv)
    srv.cmd("run-shell", PLUGIN)
    assert prefix_table(srv) == before
    assert "4242" in srv.cmd("show-hooks", "-g")  # the rest is wired
    doctor = _cli(srv, run_dir, "doctor").stdout
    assert "no key opens the agent list (@agentstate-popup-key is '')" in doctor
    assert "is not bound" not in doctor
    clean(srv, run_dir)
    assert prefix_table(srv) == before


def test_a_stock_binding_is_taken_when_asked_for_and_given_back_with_its_note(tmux_server,
                                                                             run_dir, tmp_path):
    """`o` is stock tmux's "Select the next pane": not the user's choice, so naming it takes it;
    the old option name still counts."""
    srv = tmux_server
    load_config(srv, tmp_path, "set -g @agentstate-key o\n")
    before, before_notes = prefix_table(srv), prefix_table(srv, notes=True)
    srv.cmd("run-shell", PLUGIN)
    assert "--popup" in key(srv, "o") and key(srv, "A") == ""
    clean(srv, run_dir)
    assert prefix_table(srv) == before and prefix_table(srv, notes=True) == before_notes


def test_a_key_changed_between_loads_gives_the_old_one_back(tmux_server, run_dir, tmp_path):
    srv = tmux_server
    before = prefix_table(srv)
    srv.cmd("run-shell", PLUGIN)
    assert "--popup" in key(srv, "A")
    load_config(srv, tmp_path, "set -g @agentstate-popup-key F\n")  # edited, re-sourced
    srv.cmd("run-shell", PLUGIN)
    assert key(srv, "A") == "" and "--popup" in key(srv, "F")
    clean(srv, run_dir)
    assert prefix_table(srv) == before


def test_a_default_segment_appears_only_when_none_is_configured(tmux_server, run_dir, tmp_path):
    srv = tmux_server
    before = srv.cmd("show-options", "-gv", "status-right")
    srv.cmd("run-shell", PLUGIN)
    assert srv.cmd("show-options", "-gv", "status-right") == "#{@agentstate_summary} " + before
    srv.cmd("run-shell", PLUGIN)  # once only
    assert srv.cmd("show-options", "-gv", "status-right") == "#{@agentstate_summary} " + before
    clean(srv, run_dir)
    assert srv.cmd("show-options", "-gv", "status-right") == before
    # the user's own #{agentstate} in status-right, set after the default segment came: theirs,
    # given back as they wrote it
    srv.cmd("run-shell", PLUGIN)
    load_config(srv, tmp_path, "set -g status-right '#{agentstate} %H:%M'\n")
    srv.cmd("run-shell", PLUGIN)
    assert srv.cmd("show-options", "-gv", "status-right") == "#{@agentstate_summary} %H:%M"
    clean(srv, run_dir)
    assert srv.cmd("show-options", "-gv", "status-right") == "#{agentstate} %H:%M"
    srv.cmd("set-option", "-g", "status-right", before)
    # placed by the user: left where it is; opted out: none
    load_config(srv, tmp_path, "set -g status-left '#{agentstate}'\n")
    srv.cmd("run-shell", PLUGIN)
    assert srv.cmd("show-options", "-gv", "status-right") == before
    clean(srv, run_dir)
    load_config(srv, tmp_path, "set -g status-left ''\nset -g @agentstate-default-segment off\n")
    srv.cmd("run-shell", PLUGIN)
    assert srv.cmd("show-options", "-gv", "status-right") == before


def test_a_name_that_is_no_key_binds_nothing_and_doctor_says_so(tmux_server, run_dir, tmp_path):
    srv = tmux_server
    load_config(srv, tmp_path, "set -g @agentstate-popup-key 'No Such Key'\n")
    before = prefix_table(srv)
    srv.cmd("run-shell", PLUGIN)
    assert "--next" in key(srv, "a")
    def lines(table):  # the table's lines, alignment aside (its columns fit the widest key)
        return {" ".join(line.split()) for line in table.splitlines()}
    assert lines(prefix_table(srv)) - lines(before) == {" ".join(key(srv, "a").split())}
    assert "--popup" not in prefix_table(srv)
    assert "@agentstate_saved_popup_key" not in srv.cmd("show-options", "-g")
    doctor = _cli(srv, run_dir, "doctor").stdout
    assert "prefix + No Such Key is not bound" in doctor and "set -g @agentstate-popup-key" in doctor
    for pane in srv.cmd("list-panes", "-a", "-F", "#{pane_in_mode}").split():
        assert pane == "0"  # no run-shell error view
