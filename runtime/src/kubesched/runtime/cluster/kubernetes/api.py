"""HTTP to the API server: raw JSON over the server's urllib3 connection pool.

The request path is tuned (it is most of a bind's CPU in Python): requests go straight to the
server's ``HTTPSConnectionPool`` (not through the PoolManager's per-call URL parsing and pool
lookup), idle connections sit in a lock-free stack, the ``Retry``/``Timeout`` objects are built
once, and a static token's headers are looked up once (``auth.py``).

Writes (every method but GET: the Binding, Event and status patch of each pod) skip
``http.client`` too: on one of the pool's own connections (its TLS set up by urllib3), the
request is written as one buffer and the response's status line and headers are split by hand
(``http.client`` parses them with the ``email`` package, about half of a write's CPU).
HTTP/1.1 keep-alive, ``Content-Length``, chunked bodies and bodies that end with the
connection; a connection that failed or that the server closes is dropped, as urllib3 does.
What urllib3 and http.client did stays: an unsafe request target is percent-encoded, Host
leaves out the default port, an answer sent before the whole body was read is the result, a
malformed answer is a retryable connection error. Reads and watches stay on urllib3.
"""

from __future__ import annotations

import json
import queue
import re
from collections.abc import Mapping
from typing import Any

from kubesched.sdk._text import quote

from .auth import Auth, config_source, load_configuration, pool_manager
from .codec import loads
from .errors import BadResponse, error_for
from .ratelimit import RateLimiter

__all__ = ["KubeClient"]


class _ConnStack:
    """The idle connections of a non-blocking urllib3 pool, without ``queue.LifoQueue``'s
    Conditions (two notifies per request): list pop/append are atomic. Like the pool's own
    queue it starts with ``maxsize`` placeholders (urllib3 makes a connection for each)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: list[Any] = [None] * maxsize

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        try:
            return self._items.pop()
        except IndexError:
            raise queue.Empty from None

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        if len(self._items) >= self.maxsize:
            raise queue.Full
        self._items.append(item)

    def qsize(self) -> int:
        return len(self._items)


class _Closed(OSError):
    """The server closed a kept-alive connection before it answered (retryable, an OSError)."""


class _Malformed(OSError):
    """The answer is not HTTP/1.x (retryable, an OSError, as urllib3's ProtocolError was)."""

    def __init__(self, what: str, raw: bytes) -> None:
        super().__init__(f"malformed response: {what} {quote(raw.decode('latin-1'))}")


#: the first byte of a body that is not decoded, for a 2xx the API server sent (nothing, or "{")
_NOT_DECODED_OK = (b"", b"{")

#: finds a byte a request target may not hold as it is (a control, space, DEL, non-ASCII): a
#: path with one is percent-encoded as urllib3 does, never sent as a second request line
_unsafe_in_target = re.compile(rb"[\x00-\x20\x7f-\xff]").search


def _encoded_target(target: str) -> bytes:
    """``target`` percent-encoded as urllib3 encodes a request target."""
    from urllib3.util.url import _encode_target

    return _encode_target(target).encode("ascii")


def _host_header(host: str, port: int | None, default_port: int) -> bytes:
    """The Host line http.client sends for urllib3's host (already IDNA-encoded, no brackets):
    an IPv6 address in brackets, the port left out when it is the scheme's default."""
    h = host.rstrip(".")  # as urllib3's connection gives it to http.client
    if ":" in h:
        h = f"[{h}]"
    if port is not None and port != default_port:
        h = f"{h}:{port}"
    return f"Host: {h}\r\n".encode("ascii")


def _read_response(sock: Any, method: str) -> tuple[int, bytes, bool]:
    """(status, body, keep the connection) of one HTTP/1.x response read from ``sock``."""
    recv = sock.recv
    buf = b""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            break
        chunk = recv(65536)
        if not chunk:
            raise _Closed("the server closed the connection")
        buf += chunk
    lines = buf[:end].split(b"\r\n")
    rest = buf[end + 4 :]
    version, _, status_s = lines[0].partition(b" ")
    try:
        status = int(status_s[:3])
    except ValueError:
        raise _Malformed("status line", lines[0]) from None
    if not version.startswith(b"HTTP/"):
        raise _Malformed("status line", lines[0])
    length = -1
    chunked = False
    keep = version == b"HTTP/1.1"
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                raise _Malformed("Content-Length", value.strip()) from None
        elif name == b"transfer-encoding":
            chunked = b"chunked" in value.lower()
        elif name == b"connection":
            v = value.strip().lower()
            tokens = [t.strip() for t in v.split(b",")] if b"," in v else (v,)
            keep = b"close" not in tokens and (keep or b"keep-alive" in tokens)
    if status < 200 and status != 101:  # 1xx: an interim answer; the real one follows
        return _read_response(_Prefixed(sock, rest), method)
    if method == "HEAD" or status in (204, 304):
        return status, b"", keep
    if chunked:
        return status, _read_chunked(recv, rest), keep
    if length >= 0:
        while len(rest) < length:
            chunk = recv(max(65536, length - len(rest)))
            if not chunk:
                raise _Closed("the server closed the connection mid-body")
            rest += chunk
        return status, rest[:length], keep
    parts = [rest]  # the body ends with the connection
    while chunk := recv(65536):
        parts.append(chunk)
    return status, b"".join(parts), False


def _read_chunked(recv: Any, buf: bytes) -> bytes:
    out: list[bytes] = []
    while True:
        while (i := buf.find(b"\r\n")) < 0:
            chunk = recv(65536)
            if not chunk:
                raise _Closed("the server closed the connection mid-body")
            buf += chunk
        try:
            size = int(buf[:i].split(b";", 1)[0], 16)
        except ValueError:
            raise _Malformed("chunk size", buf[:i]) from None
        if size < 0:
            raise _Malformed("chunk size", buf[:i])
        buf = buf[i + 2 :]
        if size == 0:  # the last chunk: trailer lines (if any) up to an empty line end the body
            while (i := buf.find(b"\r\n")) != 0:
                if i < 0:
                    chunk = recv(65536)
                    if not chunk:
                        raise _Closed("the server closed the connection mid-body")
                    buf += chunk
                else:
                    buf = buf[i + 2 :]
            return b"".join(out)
        while len(buf) < size + 2:
            chunk = recv(65536)
            if not chunk:
                raise _Closed("the server closed the connection mid-body")
            buf += chunk
        out.append(buf[:size])
        buf = buf[size + 2 :]


class _Prefixed:
    """A socket whose first ``recv`` returns bytes already read."""

    def __init__(self, sock: Any, head: bytes) -> None:
        self.sock, self.head = sock, head

    def recv(self, n: int) -> bytes:
        if self.head:
            head, self.head = self.head, b""
            return head
        return self.sock.recv(n)


class KubeClient:
    """Raw JSON requests over the kubernetes client's configured connection pool."""

    def __init__(self, kubeconfig: str | None = None, *, qps: float = 50, burst: int = 100, context: str | None = None) -> None:
        import urllib3

        cfg = load_configuration(kubeconfig, context)
        self.configuration = cfg
        self.api, self.pool = pool_manager(cfg)
        self.host = cfg.host.rstrip("/")
        #: where the credentials come from, for messages ("kubeconfig PATH")
        self.source = config_source(kubeconfig)
        #: the server's address for messages: the URL without any user:password part
        u = urllib3.util.parse_url(self.host)
        self.server = u._replace(auth=None).url if u.auth else self.host
        self._auth = Auth(cfg)
        self._headers = self._auth.headers
        # Requests go straight to the API server's connection pool: the PoolManager's per-call
        # URL parsing, pool lookup and Retry objects cost more than the request itself in
        # Python. (Behind a proxy the PoolManager path is kept: it adds the proxy headers.)
        self._conn_pool: Any = None
        #: a path in the server URL (e.g. ``https://rancher/k8s/clusters/c-1``) prefixes every path
        self._path_prefix = (urllib3.util.parse_url(self.host).path or "").rstrip("/")
        if type(self.pool) is urllib3.PoolManager:
            self._conn_pool = self.pool.connection_from_url(self.host)
            if not self._conn_pool.block and isinstance(self._conn_pool.pool, queue.LifoQueue):
                self._conn_pool.pool = _ConnStack(self._conn_pool.pool.maxsize)
        #: the request line's target prefix and the Host header of the direct write path
        self._host_header = b""
        if self._conn_pool is not None:
            cp = self._conn_pool
            self._host_header = _host_header(cp.host.strip("[]"), cp.port, cp.ConnectionCls.default_port)
        self._no_retries = urllib3.Retry(total=False, redirect=False)
        self._timeouts: dict[float | None, Any] = {}
        self.limiter = RateLimiter(qps, burst)
        #: kube-scheduler gives its event broadcaster a client of its own (same qps/burst), so
        #: events never take binding's budget; so do we.
        self.event_limiter = RateLimiter(qps, burst)

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: float | None = 30.0,
        stream: bool = False,
        limit: bool | str = True,
        decode: bool = True,
    ) -> Any:
        """One API request; the decoded JSON response (``{}`` with ``decode=False``, for writes
        whose echo nobody reads: still a 2xx with no body or a JSON object, else BadResponse),
        or the streaming response. Errors raise the ApiError subclass of their status
        (``errors.error_for``)."""
        if limit == "events":
            self.event_limiter.acquire()
        elif limit:
            self.limiter.acquire()
        url = self.host + path
        if query:
            from urllib.parse import urlencode

            url += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        data = None
        if body is not None:
            # bytes: a body the backend encoded itself (codec.dumps); anything else (a plugin's
            # patch) keeps the standard library's encoding
            data = body if type(body) is bytes else json.dumps(body).encode()
            content_type = content_type or "application/json"
        if method != "GET" and not stream and self._conn_pool is not None:
            status, raw = self._write(method, self._path_prefix + url[len(self.host) :], data, content_type, timeout)
            if status >= 400:
                try:
                    parsed = loads(raw)
                except Exception:
                    parsed = raw.decode(errors="replace")
                raise error_for(status, parsed, method, path)
            if not decode:
                # not decoded, but still the API server's answer: a 2xx whose body is empty or a
                # JSON object (a proxy's HTML page or a redirect to a login page is not)
                if not 200 <= status < 300 or raw[:1] not in _NOT_DECODED_OK:
                    raise BadResponse(status, method, path)
                return {}
            if not raw:
                return {}
            try:
                return loads(raw)
            except ValueError:
                raise BadResponse(status, method, path) from None
        t = self._timeouts.get(timeout)
        if t is None:
            import urllib3

            t = self._timeouts[timeout] = urllib3.Timeout(connect=10.0, read=timeout)
        if self._conn_pool is not None:
            resp = self._conn_pool.urlopen(
                method,
                self._path_prefix + url[len(self.host) :],
                body=data,
                headers=self._headers(content_type),
                preload_content=not stream,
                timeout=t,
                retries=self._no_retries,
                redirect=False,
                assert_same_host=False,
            )
        else:
            resp = self.pool.request(method, url, body=data, headers=self._headers(content_type), preload_content=not stream, timeout=t, retries=False)
        if resp.status >= 400:
            raw = resp.data if not stream else resp.read()
            try:
                parsed = loads(raw)
            except Exception:
                parsed = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            if stream:
                resp.release_conn()
            raise error_for(resp.status, parsed, method, path)
        if stream:
            return resp
        data = resp.data
        if not decode:
            if not 200 <= resp.status < 300 or data[:1] not in _NOT_DECODED_OK:
                raise BadResponse(resp.status, method, path)
            return {}
        if not data:
            return {}
        try:
            return loads(data)
        except ValueError:
            raise BadResponse(resp.status, method, path) from None

    def _write(self, method: str, target: str, data: bytes | None, content_type: str | None, timeout: float | None) -> tuple[int, bytes]:
        """One request on a connection of the pool, without http.client: (status, body)."""
        pool = self._conn_pool
        conn = pool._get_conn()  # drops a connection the server closed meanwhile, as urlopen does
        try:
            if (r := conn._HTTPConnection__response) is not None and not r.isclosed():
                conn.close()  # a response (a watch) released unfinished: its stream is not ours
            if conn.sock is None:
                conn.timeout = 10.0  # the connect timeout of every request
                conn.connect()
            sock = conn.sock
            sock.settimeout(timeout)
            head = self._auth.header_block(content_type)
            t = target.encode()
            if _unsafe_in_target(t) is not None:
                t = _encoded_target(target)
            if data is None:
                msg = b"%s %s HTTP/1.1\r\n%s%s\r\n" % (method.encode(), t, self._host_header, head)
            else:
                msg = b"%s %s HTTP/1.1\r\n%s%sContent-Length: %d\r\n\r\n%s" % (method.encode(), t, self._host_header, head, len(data), data)
            try:
                sock.sendall(msg)
            except (BrokenPipeError, ConnectionResetError) as e:
                # the server may have answered before reading the whole body (413) and closed:
                # its answer is the result, as urllib3 read it; else the send error is
                try:
                    status, raw, _ = _read_response(sock, method)
                except Exception:
                    raise e from None
                keep = False
            else:
                status, raw, keep = _read_response(sock, method)
        except BaseException:
            conn.close()
            pool._put_conn(None)  # the slot of a new connection, as urlopen does on an error
            raise
        if not keep:
            conn.close()
        pool._put_conn(conn)
        return status, raw
