"""HTTP to the API server: raw JSON over the server's urllib3 connection pool.

The request path is tuned (it is most of a bind's CPU in Python): requests go straight to the
server's ``HTTPSConnectionPool`` (not through the PoolManager's per-call URL parsing and pool
lookup), idle connections sit in a lock-free stack, the ``Retry``/``Timeout`` objects are built
once, and a static token's headers are looked up once (``auth.py``).
"""

from __future__ import annotations

import json
import queue
from collections.abc import Mapping
from typing import Any

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
        self._headers = Auth(cfg).headers
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
        whose echo nobody reads), or the streaming response. Errors raise the ApiError subclass
        of their status (``errors.error_for``)."""
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
        if not data or not decode:
            return {}
        try:
            return loads(data)
        except ValueError:
            raise BadResponse(resp.status, method, path) from None
