"""`manifests update` against a real HTTP server on 127.0.0.1: a newer manifest is cached and
runs; every fault (bad hash, older version, too-new engine, broken TOML, a server that is down,
slow or trickling, an oversized file) is refused with one line and the rules in force stay."""
import hashlib
import re
import http.server
import importlib.util
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tmux_agentstate.core.catalog import BUNDLED_DIR, Catalog
from tmux_agentstate.core.manifest import ENGINE
from tmux_agentstate.updates.index import Entry, render_index
from tmux_agentstate.updates.update import InForce, update

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = (BUNDLED_DIR / "claude.toml").read_text()
V = Catalog([BUNDLED_DIR]).get("claude").version  # the bundled one's; updates are V + n


def claude_v(version: int, extra: str = "") -> bytes:
    text = CLAUDE.replace(f"\nversion = {V}\n", f"\nversion = {version}\n", 1)
    assert text != CLAUDE or version == V
    return (text + extra).encode()


class Site:
    """Files served on 127.0.0.1: path → (body, seconds before answering, trickle seconds per
    byte)."""

    def __init__(self):
        self.files: dict[str, tuple[bytes, float, float]] = {}
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body, delay, trickle = site.files.get(self.path, (None, 0, 0))
                time.sleep(delay)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    if trickle:
                        for i in range(len(body)):
                            self.wfile.write(body[i:i + 1])
                            self.wfile.flush()
                            time.sleep(trickle)
                    else:
                        self.wfile.write(body)
                except OSError:
                    pass

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/m/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def publish(self, name: str, body: bytes, *, version: int, engine: int | None = None,
                sha: str | None = None, delay: float = 0, trickle: float = 0) -> None:
        self.files[f"/m/{name}.toml"] = (body, delay, trickle)
        if engine is None:  # the index says what the file says (claude.toml needs engine 2: marks)
            m = re.search(rb"^engine = (\d+)", body, re.M)
            engine = int(m.group(1)) if m else 1
        entry = Entry(name, version, sha or hashlib.sha256(body).hexdigest(), engine)
        self.files["/m/index.toml"] = (render_index([entry]).encode(), 0, 0)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "tmux-agentstate" / "manifests", \
        tmp_path / "config" / "tmux-agentstate" / "manifests"


def in_force(cache: Path) -> dict:
    c = Catalog([BUNDLED_DIR, cache], cached=cache)
    return {n: InForce(c.get(n).version, c.source(n)) for n in c.names()}


def run(site, cache, deadline=5.0):
    return update(site.url, cache, in_force(cache), deadline=deadline)


def test_the_committed_index_lists_every_manifest_as_it_is():
    spec = importlib.util.spec_from_file_location("manifest_index", ROOT / "scripts" / "manifest_index.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "manifests" / "index.toml").read_text() == module.generated(), \
        "manifests/index.toml is stale: bump the manifest's version, run scripts/manifest_index.py --write"


def test_a_newer_manifest_is_cached_and_runs(site, dirs):
    cache, _ = dirs
    site.publish("claude", claude_v(V + 1), version=V + 1)
    lines, ok = run(site, cache)
    assert ok and lines == [f"claude: updated to v{V + 1}, was v{V} (bundled)"]
    c = Catalog()
    assert c.source("claude") == "cached" and c.get("claude").version == V + 1
    assert not [p for p in cache.iterdir() if p.name.endswith(".part")]
    lines, ok = run(site, cache)  # again: nothing to do
    assert ok and lines == [f"claude: v{V + 1} is in force already (cached)"]


def test_precedence_user_then_the_newer_of_cached_and_bundled(site, dirs):
    cache, user = dirs
    cache.mkdir(parents=True)
    (cache / "claude.toml").write_bytes(claude_v(V, "\n# same version as the bundled one\n"))
    assert Catalog().source("claude") == "bundled"  # a tie: what ships
    (cache / "claude.toml").write_bytes(claude_v(V + 2))
    c = Catalog()
    assert (c.source("claude"), c.get("claude").version) == ("cached", V + 2)
    user.mkdir(parents=True)
    (user / "claude.toml").write_bytes(claude_v(V, "\n# mine\n"))
    assert Catalog().source("claude") == "user"  # the user's own file, whatever its version


REFUSALS = {
    "bad hash": (dict(sha="0" * 64), "sha256"),
    "too-new engine": (dict(engine=ENGINE + 1), f"needs engine {ENGINE + 1}"),
    "broken TOML": (dict(body=f"name = 'claude'\nversion = {V + 1}\n[[rules]\n".encode()), "invalid TOML"),
    "rules that do not load": (dict(body=claude_v(V + 1).replace(b"state = \"blocked\"", b"state = \"maybe\"", 1)),
                               "'state' must be one of"),
    "oversized file": (dict(body=claude_v(V + 1, "#" * 300_000 + "\n")), "over 256 KB"),
    "slow server": (dict(delay=3.0), "too slow"),
    "trickling server": (dict(trickle=0.01), "too slow"),
    "name differs from the file": (dict(name="codex"), "they must agree"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_each_fault_is_refused_with_one_line_and_the_rules_stay(site, dirs, case):
    cache, _ = dirs
    opts, words = REFUSALS[case]
    body = opts.get("body", claude_v(V + 1))
    name = opts.get("name", "claude")
    if name != "claude":  # claude's file served under codex's name and entry
        body = claude_v(V + 1)
    site.publish(name, body, version=V + 1, engine=opts.get("engine"), sha=opts.get("sha"),
                 delay=opts.get("delay", 0), trickle=opts.get("trickle", 0))
    before = Catalog().get(name)
    lines, ok = run(site, cache, deadline=1.0)
    assert not ok and len(lines) == 1, lines
    assert lines[0].startswith(f"{name}: refused v{V + 1}: ") and words in lines[0], lines[0]
    assert lines[0].endswith(f"kept the bundled v{before.version}") and "\n" not in lines[0]
    assert not cache.exists() or not list(cache.iterdir())  # nothing written, not even a temp
    after = Catalog().get(name)
    assert (after.path, after.version) == (before.path, before.version)


def test_an_older_version_is_refused_and_the_cached_one_stays(site, dirs):
    cache, _ = dirs
    site.publish("claude", claude_v(V + 2), version=V + 2)
    assert run(site, cache)[1]
    site.publish("claude", claude_v(V + 1), version=V + 1)
    lines, ok = run(site, cache)
    assert not ok and lines == [f"claude: refused v{V + 1}: older than the cached v{V + 2}; "
                                f"kept the cached v{V + 2}"]
    assert Catalog().get("claude").version == V + 2


def test_a_server_that_is_down_or_an_index_that_is_wrong(site, dirs):
    cache, _ = dirs
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{s.getsockname()[1]}/m/"
    lines, ok = update(down, cache, in_force(cache), deadline=1.0)
    assert not ok and len(lines) == 1 and lines[0].startswith("update refused: ") \
        and "unchanged" in lines[0], lines
    for body, words in [(b"schema = 2\n", "schema 2"), (b"[[manifest\n", "not valid TOML"),
                        (b"x" * 70_000, "over 64 KB")]:
        site.files["/m/index.toml"] = (body, 0, 0)
        lines, ok = run(site, cache)
        assert not ok and len(lines) == 1 and words in lines[0], lines
    site.files.pop("/m/index.toml")
    lines, ok = run(site, cache)
    assert not ok and "HTTP 404" in lines[0]
    assert not cache.exists()


def test_the_command_prints_lines_and_exits_nonzero_on_a_refusal(site, dirs):
    cache, _ = dirs
    env = dict(os.environ)
    site.publish("claude", claude_v(V + 1), version=V + 1, sha="f" * 64)
    cmd = [sys.executable, "-m", "tmux_agentstate", "manifests", "update", "--url", site.url]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 1 and "Traceback" not in out.stderr + out.stdout
    assert out.stdout.startswith(f"claude: refused v{V + 1}: sha256 ")
    site.publish("claude", claude_v(V + 1), version=V + 1)
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout == f"claude: updated to v{V + 1}, was v{V} (bundled)\n"
    out = subprocess.run([sys.executable, "-m", "tmux_agentstate", "manifests", "list"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert out.returncode == 0
    claude = next(line for line in out.stdout.splitlines() if line.startswith("claude"))
    assert f" v{V + 1} " in claude and "cached" in claude and str(cache / "claude.toml") in claude


def test_the_periodic_check_is_off_by_default_and_runs_once_per_period(site, dirs):
    from tmux_agentstate.sidecar.config import Config
    from tmux_agentstate.sidecar.update_check import UpdateCheck
    assert Config.from_tmux({}).manifest_check == 0  # no network unless the user asks
    assert Config.from_tmux({"@agentstate-manifest-check": "daily"}).manifest_check == 86400
    assert Config.from_tmux({"@agentstate-manifest-check": "12"}).manifest_check == 12 * 3600
    assert Config.from_tmux({"@agentstate-manifest-check": "soon"}).manifest_check == 0
    cache, _ = dirs
    hits = []
    site.publish("claude", claude_v(V + 1), version=V + 1)
    body = site.files["/m/index.toml"]
    site.files = _Counting(site.files, hits)
    assert UpdateCheck(0, site.url, cache).due_in() == 0
    first = UpdateCheck(86400, site.url, cache)
    assert first.check_once() == [f"claude: updated to v{V + 1}, was v{V} (bundled)"]
    assert Catalog().get("claude").version == V + 1 and hits.count("/m/index.toml") == 1
    second = UpdateCheck(86400, site.url, cache)  # another server's sidecar, the same day
    assert second.due_in() > 86000 and second.check_once() is None
    assert hits.count("/m/index.toml") == 1 and body


class _Counting(dict):
    def __init__(self, files, hits):
        super().__init__(files)
        self.hits = hits

    def get(self, path, default=None):
        self.hits.append(path)
        return super().get(path, default)
