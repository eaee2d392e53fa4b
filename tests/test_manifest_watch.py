"""The manifest watch (sidecar/manifests.py) on real folders and real file-system events."""
import time

from conftest import wait_for
from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.sidecar.manifests import ManifestWatch


def test_a_manifest_folder_made_after_the_start_is_read_at_the_next_sweep(tmp_path):
    """The user's folder is made after the sidecar started: the sweep that first sees it
    watches and reads it (each sweep asks `reload_due`), with no pane listing between (an
    idle sidecar lists every 30 s), and a file changed in it later is news too."""
    user = tmp_path / "config" / "tmux-agentstate" / "manifests"
    watch = ManifestWatch(Catalog([BUNDLED_DIR, user]))
    watch.start()
    try:
        assert not watch.reload_due()  # nothing there, nothing changed
        user.mkdir(parents=True)
        override = (BUNDLED_DIR / "claude.toml").read_text().replace(
            'display = "Claude Code"', 'display = "Claude, mine"')
        (user / "claude.toml").write_text(override)
        assert watch.reload_due()  # the sweep right after: a stat found the folder
        assert watch.reload()
        assert watch.catalog.get("claude").display == "Claude, mine"
        assert not watch.reload_due()  # read: nothing new
        time.sleep(0.2)  # a change a moment later comes by the folder's own watch
        (user / "claude.toml").write_text(override.replace("Claude, mine", "Claude, again"))
        wait_for(watch.reload_due, timeout=10, message="the edit seen")
        assert watch.reload()
        assert watch.catalog.get("claude").display == "Claude, again"
    finally:
        watch.stop()
