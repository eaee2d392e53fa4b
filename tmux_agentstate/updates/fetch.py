"""One download for `manifests update`, bounded end to end: a body of at most `cap` bytes,
within one deadline for the whole request (name lookup, connect, TLS, headers, body, every
redirect), from an allowed scheme at every hop.

urllib's own `timeout` bounds each socket wait, not the request: a server that sends its
headers or body a byte a second never lets one wait time out. Here every receive (and send)
waits at most the time left before the deadline, so the request as a whole cannot outlast it.

Schemes: the URL the user gives may be https, http or file (a local folder of manifests). A
redirect may only go to https, or also to http when the request began on http: never to file,
ftp or data (urllib would read a local file, or an FTP server, on a server's word), never from
https down to http.
"""
from __future__ import annotations

import http.client
import os
import socket
import ssl
import stat
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from functools import partial

SCHEMES = ("https", "http", "file")
MAX_REDIRECTS = 5


class FetchError(Exception):
    """One line: what could not be fetched, and why."""


class _TooSlow(socket.timeout):
    """The request's deadline passed."""


def fetch(url: str, cap: int, deadline: float) -> bytes:
    """The body at `url`, at most `cap` bytes, within `deadline` seconds in all."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise FetchError(f"{url}: only {', '.join(SCHEMES)} URLs are read")
    if scheme == "file":
        return _read_file(url, parts, cap)
    end = time.monotonic() + deadline
    too_slow = FetchError(f"{url}: too slow (over {deadline:g} s)")
    try:
        with _opener(scheme, end).open(url, timeout=deadline) as r:
            body = bytearray()
            while len(body) <= cap:
                if time.monotonic() > end:
                    raise too_slow
                chunk = r.read1(min(65536, cap + 1 - len(body)))
                if not chunk:
                    break
                body += chunk
    except FetchError:
        raise
    except urllib.error.HTTPError as e:
        raise FetchError(f"{url}: HTTP {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        if isinstance(e.reason, socket.timeout):
            raise too_slow from None
        raise FetchError(f"{url}: {getattr(e.reason, 'strerror', None) or e.reason}") from None
    except socket.timeout:
        raise too_slow from None
    except (OSError, ValueError, http.client.HTTPException) as e:
        raise FetchError(f"{url}: {getattr(e, 'strerror', None) or e}") from None
    if len(body) > cap:
        raise FetchError(f"{url}: over {cap // 1024} KB")
    return bytes(body)


def _read_file(url: str, parts, cap: int) -> bytes:
    """A local file: a regular one only (a FIFO or a device would block or never end)."""
    if parts.netloc not in ("", "localhost"):
        raise FetchError(f"{url}: a file URL names a file on this machine only")
    path = urllib.request.url2pathname(parts.path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise FetchError(f"{url}: {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FetchError(f"{url}: not a regular file")
        body = b""
        while len(body) <= cap:
            chunk = os.read(fd, cap + 1 - len(body))
            if not chunk:
                break
            body += chunk
    except OSError as e:
        raise FetchError(f"{url}: {e.strerror}") from None
    finally:
        os.close(fd)
    if len(body) > cap:
        raise FetchError(f"{url}: over {cap // 1024} KB")
    return body


def _left(end: float) -> float:
    left = end - time.monotonic()
    if left <= 0:
        raise _TooSlow("the deadline passed")
    return left


class _Deadline:
    """Mixed into a socket class: its every wait is bounded by what is left of the request's
    deadline (for TLS, the handshake is bounded by the timeout the plain socket had)."""

    end: float | None = None

    def _arm(self) -> None:
        if self.end is not None:
            self.settimeout(_left(self.end))

    def recv(self, *a, **kw):
        self._arm()
        return super().recv(*a, **kw)

    def recv_into(self, *a, **kw):
        self._arm()
        return super().recv_into(*a, **kw)

    def sendall(self, *a, **kw):
        self._arm()
        return super().sendall(*a, **kw)


class _DeadlineSocket(_Deadline, socket.socket):
    pass


class _DeadlineSSLSocket(_Deadline, ssl.SSLSocket):
    pass


def _resolve(host: str, port: int, end: float) -> list:
    """getaddrinfo, given up on at the deadline (it cannot be interrupted: a daemon thread
    finishes it alone)."""
    found: list = []

    def look_up():
        try:
            found.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except OSError as e:
            found.append(e)

    t = threading.Thread(target=look_up, daemon=True)
    t.start()
    t.join(_left(end))
    if not found:
        raise _TooSlow("the name lookup did not finish in time")
    if isinstance(found[0], OSError):
        raise found[0]
    return found[0]


def _connect(address, timeout=None, source_address=None, *, end: float):
    """socket.create_connection, each step within the deadline, the socket a deadline one."""
    host, port = address
    last: OSError | None = None
    for family, kind, proto, _, addr in _resolve(host, port, end):
        sock = _DeadlineSocket(family, kind, proto)
        sock.end = end
        try:
            sock._arm()
            if source_address:
                sock.bind(source_address)
            sock.connect(addr)
            return sock
        except OSError as e:
            last = e
            sock.close()
            if isinstance(e, socket.timeout):
                break
    raise last or OSError(f"{host}: no address")


class _HTTPConnection(http.client.HTTPConnection):
    def __init__(self, *a, end: float, **kw):
        super().__init__(*a, **kw)
        self._create_connection = partial(_connect, end=end)


class _HTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, *a, end: float, **kw):
        super().__init__(*a, **kw)
        self._end = end
        self._create_connection = partial(_connect, end=end)

    def connect(self):
        super().connect()
        self.sock.end = self._end


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, end: float):
        super().__init__()
        self.end = end

    def http_open(self, req):
        return self.do_open(partial(_HTTPConnection, end=self.end), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, end: float):
        context = ssl.create_default_context()
        context.sslsocket_class = _DeadlineSSLSocket
        super().__init__(context=context)
        self.end = end

    def https_open(self, req):
        return self.do_open(partial(_HTTPSConnection, end=self.end), req, context=self._context)


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to an allowed scheme (see the module's doc), at most
    MAX_REDIRECTS times."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, first_scheme: str):
        super().__init__()
        self.first = first_scheme
        self.allowed = ("https",) if first_scheme == "https" else ("https", "http")

    def http_error_302(self, req, fp, code, msg, headers):
        target = headers.get("location") or headers.get("uri")
        if target:
            new = urllib.parse.urljoin(req.full_url, target)
            scheme = urllib.parse.urlsplit(new).scheme.lower()
            if scheme not in self.allowed:
                fp.close()
                raise FetchError(f"{req.full_url}: refused a redirect to {new[:200]} (from "
                                 f"{self.first}, only {' or '.join(self.allowed)} is followed)")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _opener(scheme: str, end: float) -> urllib.request.OpenerDirector:
    """Only what an http(s) request needs: no file, ftp or data handler to be redirected to."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.UnknownHandler(),
                    urllib.request.HTTPDefaultErrorHandler(), _Redirects(scheme),
                    urllib.request.HTTPErrorProcessor(), _HTTPHandler(end), _HTTPSHandler(end)):
        opener.add_handler(handler)
    return opener
