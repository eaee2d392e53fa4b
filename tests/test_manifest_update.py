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

    def __init__(self, tls=None):
        self.files: dict[str, tuple[bytes, float, float]] = {}
        self.raw: dict[str, object] = {}  # path → a function that writes the whole answer
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path in site.raw:
                    try:
                        site.raw[self.path](self)
                    except OSError:
                        pass
                    return
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
        if tls is not None:  # an ssl.SSLContext for the server side
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        scheme = "https" if tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.server.server_address[1]}/m/"
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
    # tomllib recurses per level: past the stack, RecursionError, not a TOMLDecodeError
    "TOML nested too deeply": (dict(body=b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n"),
                               "nested too deeply"),
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
    # a version newer than the bundled file of that name (else it is "in force already")
    new = max(V, Catalog([BUNDLED_DIR]).get(name).version) + 1
    if name != "claude":  # claude's file served under codex's name and entry
        body = claude_v(new)
    site.publish(name, body, version=new, engine=opts.get("engine"), sha=opts.get("sha"),
                 delay=opts.get("delay", 0), trickle=opts.get("trickle", 0))
    before = Catalog().get(name)
    lines, ok = run(site, cache, deadline=1.0)
    assert not ok and len(lines) == 1, lines
    assert lines[0].startswith(f"{name}: refused v{new}: ") and words in lines[0], lines[0]
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


# Issue 25 item 6: the whole request within one deadline, redirects only to allowed schemes,
# versions bounded. Each update runs in a thread given a generous time to end: a fetch that the
# deadline does not bound would take minutes (the server sends a byte a second)


def trickled(data: bytes, every: float = 1.0):
    def answer(handler):
        for i in range(len(data)):
            handler.wfile.write(data[i:i + 1])
            handler.wfile.flush()
            time.sleep(every)
    return answer


def ends(fn, limit: float = 30.0):
    box = []
    t = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    t.start()
    t.join(limit)
    assert box, f"still running after {limit:g} s: the deadline does not bound the request"
    return box[0]


SLOW_HEADERS = b"HTTP/1.0 200 OK\r\nX-Padding: " + b"x" * 200 + b"\r\nContent-Length: 3\r\n\r\nx=1"


@pytest.mark.parametrize("what", ["index", "manifest"])
@pytest.mark.parametrize("slow", ["headers", "body"])
def test_a_server_that_sends_a_byte_a_second_is_refused_at_the_deadline(site, dirs, what, slow):
    cache, _ = dirs
    site.publish("claude", claude_v(V + 1), version=V + 1)
    path = "/m/index.toml" if what == "index" else "/m/claude.toml"
    if slow == "headers":
        site.raw[path] = trickled(SLOW_HEADERS)
    else:
        body = site.files[path][0]
        site.raw[path] = lambda h: (h.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n"
                                                  % (len(body) * 2)),
                                    trickled(body * 2)(h))
    lines, ok = ends(lambda: run(site, cache, deadline=2.0))
    assert not ok and len(lines) == 1 and "too slow (over 2 s)" in lines[0], lines
    if what == "index":
        assert lines[0].startswith("update refused: ") and lines[0].endswith("unchanged")
    else:
        assert lines[0].startswith(f"claude: refused v{V + 1}: ") and \
            lines[0].endswith(f"kept the bundled v{V}")
    assert not cache.exists() or not list(cache.iterdir())
    assert Catalog().get("claude").version == V


def redirect_to(location: str):
    def answer(handler):
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    return answer


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://127.0.0.1:9/claude.toml",
                                    "data:text/plain,name%20%3D%20%22claude%22"])
def test_a_redirect_to_another_scheme_is_refused(site, dirs, target):
    cache, _ = dirs
    site.publish("claude", claude_v(V + 1), version=V + 1)
    site.raw["/m/index.toml"] = redirect_to(target)
    lines, ok = ends(lambda: run(site, cache, deadline=2.0))
    assert not ok and len(lines) == 1, lines
    assert lines[0].startswith("update refused: ") and f"refused a redirect to {target}" in lines[0]
    assert lines[0].endswith("unchanged") and not cache.exists()
    # the manifest's own redirect: that manifest refused, the rules in force kept
    site.raw.pop("/m/index.toml")
    site.raw["/m/claude.toml"] = redirect_to(target)
    lines, ok = ends(lambda: run(site, cache, deadline=2.0))
    assert not ok and lines[0].startswith(f"claude: refused v{V + 1}: ") and \
        f"refused a redirect to {target}" in lines[0] and lines[0].endswith(f"kept the bundled v{V}")
    assert Catalog().get("claude").version == V


def test_a_redirect_within_http_is_followed(site, dirs):
    cache, _ = dirs
    site.publish("claude", claude_v(V + 1), version=V + 1)
    site.files["/elsewhere/claude.toml"] = site.files["/m/claude.toml"]
    site.raw["/m/claude.toml"] = redirect_to("/elsewhere/claude.toml")
    lines, ok = run(site, cache)
    assert ok and lines == [f"claude: updated to v{V + 1}, was v{V} (bundled)"]


def test_versions_past_a_sane_bound_are_refused(site, dirs):
    """An index (or a file) claiming v10**18 would take precedence over every manifest any
    future release bundles: refused, and so is a jump far past the version in force."""
    from tmux_agentstate.core.manifest import MAX_VERSION
    from tmux_agentstate.updates.update import MAX_STEP
    cache, _ = dirs
    huge = 10 ** 18
    site.publish("claude", claude_v(huge), version=huge)
    lines, ok = run(site, cache)
    assert not ok and lines == [f"claude: refused: version {huge} is past {MAX_VERSION}, more "
                                "than any manifest will reach"], lines
    far = V + MAX_STEP + 1
    site.publish("claude", claude_v(far), version=far)
    lines, ok = run(site, cache)
    assert not ok and len(lines) == 1 and lines[0].startswith(f"claude: refused v{far}: more than "
                                                              f"{MAX_STEP} versions past"), lines
    assert lines[0].endswith(f"kept the bundled v{V}")
    assert not cache.exists() or not list(cache.iterdir())
    # a cached file that claims it (written before this bound, or by hand) does not run
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "claude.toml").write_bytes(claude_v(huge))
    c = Catalog()
    assert (c.source("claude"), c.get("claude").version) == ("bundled", V)
    assert any("version" in e for e in c.errors), c.errors
    site.publish("claude", claude_v(V + MAX_STEP), version=V + MAX_STEP)  # the bound itself: fine
    (cache / "claude.toml").unlink()
    lines, ok = run(site, cache)
    assert ok and lines == [f"claude: updated to v{V + MAX_STEP}, was v{V} (bundled)"], lines


@pytest.fixture
def tls_site(tmp_path, monkeypatch):
    """The same site over TLS, its certificate (for 127.0.0.1) the one the client trusts."""
    import shutil
    import ssl
    if not shutil.which("openssl"):
        pytest.skip("openssl makes the test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    s = Site(tls=context)
    yield s
    s.close()


def test_over_https_no_downgrade_and_the_deadline_holds(tls_site, site, dirs):
    cache, _ = dirs
    tls_site.publish("claude", claude_v(V + 1), version=V + 1)
    site.publish("claude", claude_v(V + 1), version=V + 1)
    # from https to the same files over http: refused (the index would come unprotected)
    tls_site.raw["/m/index.toml"] = redirect_to(site.url + "index.toml")
    lines, ok = ends(lambda: run(tls_site, cache, deadline=2.0))
    assert not ok and len(lines) == 1 and f"refused a redirect to {site.url}index.toml" in lines[0]
    tls_site.raw["/m/index.toml"] = trickled(SLOW_HEADERS)
    lines, ok = ends(lambda: run(tls_site, cache, deadline=2.0))
    assert not ok and lines[0].startswith("update refused: ") and "too slow (over 2 s)" in lines[0]
    assert not cache.exists()
    tls_site.raw.clear()
    lines, ok = run(tls_site, cache)
    assert ok and lines == [f"claude: updated to v{V + 1}, was v{V} (bundled)"]


def test_a_local_folder_of_manifests_and_a_fifo_in_it(dirs, tmp_path):
    """file:// URLs (a folder the user keeps): a regular file is read; a FIFO or a device named
    there is refused at once (opening one would wait for a writer forever)."""
    cache, _ = dirs
    folder = tmp_path / "mine"
    folder.mkdir()
    body = claude_v(V + 1)
    (folder / "claude.toml").write_bytes(body)
    engine = int(re.search(rb"^engine = (\d+)", body, re.M).group(1))  # the index says what the file says
    (folder / "index.toml").write_text(render_index([Entry("claude", V + 1,
                                                           hashlib.sha256(body).hexdigest(), engine)]))
    (folder / "claude.toml").unlink()
    os.mkfifo(folder / "claude.toml")
    lines, ok = ends(lambda: update(folder.as_uri() + "/", cache, in_force(cache), deadline=2.0))
    assert not ok and lines == [f"claude: refused v{V + 1}: {folder.as_uri()}/claude.toml: not a "
                                f"regular file; kept the bundled v{V}"], lines
    (folder / "claude.toml").unlink()
    (folder / "claude.toml").write_bytes(body)
    lines, ok = update(folder.as_uri() + "/", cache, in_force(cache))
    assert ok and lines == [f"claude: updated to v{V + 1}, was v{V} (bundled)"], lines
