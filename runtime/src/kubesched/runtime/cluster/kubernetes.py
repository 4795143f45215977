"""The real cluster: kube-apiserver through the official ``kubernetes`` client's configuration and
connection pool, with raw JSON (no model classes) on every call.

* Informers: list (paged) + watch with resourceVersion and bookmarks; a watch that ends is
  resumed from the last resourceVersion; ``410 Gone`` (the version was compacted) relists and
  turns the difference into ADDED / MODIFIED / DELETED events, so nothing is missed.
* Binding through the ``pods/binding`` subresource, retried with backoff on 429, 5xx and
  timeouts. A 409 (conflict, "already assigned") is never retried into a second bind: the pod is
  read back, and if it is bound to the node we asked for (an earlier attempt that timed out but
  landed), the bind counts as done; otherwise the conflict is reported.
* ``events.k8s.io/v1`` Events and the ``PodScheduled`` condition / ``nominatedNodeName`` are
  written by a background worker, so the scheduling loop never waits on them.
* ``clientConnection.qps``/``burst``: a client-side token bucket shared by all requests.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kubesched.sdk import ObjectConflict, ObjectNotFound, Pod

from ..timefmt import rfc3339

__all__ = [
    "ApiError",
    "KubeClient",
    "KubernetesCluster",
    "RateLimiter",
    "resource_for",
]

log = logging.getLogger("kubesched.kubernetes")

USER_AGENT = "kubesched/0.1.0"

#: kind -> (api prefix, group/version, plural, namespaced)
BUILTIN_RESOURCES: dict[str, tuple[str, str, bool]] = {
    "Pod": ("v1", "pods", True),
    "Node": ("v1", "nodes", False),
    "Namespace": ("v1", "namespaces", False),
    "PersistentVolume": ("v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("v1", "persistentvolumeclaims", True),
    "Service": ("v1", "services", True),
    "ReplicationController": ("v1", "replicationcontrollers", True),
    "Event": ("events.k8s.io/v1", "events", True),
    "ReplicaSet": ("apps/v1", "replicasets", True),
    "StatefulSet": ("apps/v1", "statefulsets", True),
    "Deployment": ("apps/v1", "deployments", True),
    "StorageClass": ("storage.k8s.io/v1", "storageclasses", False),
    "CSINode": ("storage.k8s.io/v1", "csinodes", False),
    "CSIDriver": ("storage.k8s.io/v1", "csidrivers", False),
    "CSIStorageCapacity": ("storage.k8s.io/v1", "csistoragecapacities", True),
    "VolumeAttachment": ("storage.k8s.io/v1", "volumeattachments", False),
    "PodDisruptionBudget": ("policy/v1", "poddisruptionbudgets", True),
    "PriorityClass": ("scheduling.k8s.io/v1", "priorityclasses", False),
    "Lease": ("coordination.k8s.io/v1", "leases", True),
}


class ApiError(Exception):
    def __init__(self, status: int, body: Any, method: str = "", path: str = "") -> None:
        self.status = status
        self.body = body
        msg = body.get("message") if isinstance(body, Mapping) else str(body)[:300]
        super().__init__(f"{method} {path}: {status}: {msg}")
        self.reason = body.get("reason", "") if isinstance(body, Mapping) else ""


def resource_for(kind: str, api_version: str | None = None) -> tuple[str, str, bool]:
    """(group/version, plural, namespaced) of a built-in kind."""
    r = BUILTIN_RESOURCES.get(kind)
    if r is None:
        raise KeyError(kind)
    if api_version and api_version != r[0]:
        return (api_version, r[1], r[2])
    return r


def _base(gv: str) -> str:
    return f"/api/{gv}" if "/" not in gv else f"/apis/{gv}"


def _path(gv: str, plural: str, namespaced: bool, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
    p = _base(gv)
    if namespaced and namespace:
        p += f"/namespaces/{namespace}"
    p += f"/{plural}"
    if name:
        p += f"/{name}"
    if sub:
        p += f"/{sub}"
    return p


class RateLimiter:
    """Token bucket (client-go's flowcontrol): ``qps`` tokens per second, up to ``burst``."""

    def __init__(self, qps: float, burst: int) -> None:
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self._tokens = float(self.burst)
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Take a token, waiting for it if there is none: as ``rate.Limiter.Wait``, the token
        is reserved at once (the bucket may go below zero) and the caller sleeps exactly until
        its turn, so waiting threads never poll."""
        if self.qps <= 0:
            return
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.qps) - 1
            self._last = now
            wait = -self._tokens / self.qps if self._tokens < 0 else 0.0
        if wait > 0:
            time.sleep(wait)


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
        from kubernetes import client as kclient
        from kubernetes import config as kconfig

        cfg = kclient.Configuration()
        if kubeconfig:
            kconfig.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            kconfig.load_incluster_config(client_configuration=cfg)
        else:
            kconfig.load_kube_config(context=context, client_configuration=cfg)
        cfg.connection_pool_maxsize = max(getattr(cfg, "connection_pool_maxsize", 4) or 4, 32)
        self.configuration = cfg
        self.api = kclient.ApiClient(cfg)
        self.pool = self.api.rest_client.pool_manager
        self.host = cfg.host.rstrip("/")
        import urllib3

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
        self._static_auth: str | None = None  # the token, when no refresh hook can change it
        self.limiter = RateLimiter(qps, burst)
        #: kube-scheduler gives its event broadcaster a client of its own (same qps/burst), so
        #: events never take binding's budget; so do we.
        self.event_limiter = RateLimiter(qps, burst)

    def _headers(self, content_type: str | None) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if content_type:
            h["Content-Type"] = content_type
        cfg = self.configuration
        hook = getattr(cfg, "refresh_api_key_hook", None)
        if hook is None and self._static_auth is not None:
            if self._static_auth:
                h["Authorization"] = self._static_auth
            return h
        if hook is not None:
            hook(cfg)
        token = None
        if hasattr(cfg, "get_api_key_with_prefix"):
            # the client keeps kubeconfig and in-cluster tokens under "BearerToken" (v29+) or
            # "authorization" (older releases)
            token = cfg.get_api_key_with_prefix("BearerToken") or cfg.get_api_key_with_prefix("authorization")
        if token:
            h["Authorization"] = token
        if hook is None:
            self._static_auth = token or ""
        return h

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
        whose echo nobody reads), or the streaming response. Errors raise ApiError."""
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
            data = json.dumps(body).encode()
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
                parsed = json.loads(raw)
            except Exception:
                parsed = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            if stream:
                resp.release_conn()
            raise ApiError(resp.status, parsed, method, path)
        if stream:
            return resp
        data = resp.data
        if not data or not decode:
            return {}
        return json.loads(data)


def _retryable(e: BaseException) -> bool:
    if isinstance(e, ApiError):
        return e.status == 429 or e.status >= 500
    import urllib3

    return isinstance(e, (urllib3.exceptions.HTTPError, socket.timeout, ConnectionError, TimeoutError, OSError))


def _strip(obj: Any) -> None:
    """Drop ``metadata.managedFields`` from cached objects, as kube-scheduler's informers do
    (about half of a Pod's or Node's size; nothing in scheduling reads it)."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    if md:
        md.pop("managedFields", None)


class Informer:
    """List + watch of one resource, delivering (etype, kind, old, new) to a sink."""

    def __init__(
        self,
        client: KubeClient,
        kind: str,
        gv: str,
        plural: str,
        *,
        field_selector: str | None = None,
        label_selector: str | None = None,
        page_size: int = 500,
    ) -> None:
        self.client = client
        self.kind = kind
        self.path = _path(gv, plural, False)
        self.field_selector = field_selector
        self.label_selector = label_selector
        self.page_size = page_size
        self.store: dict[str, dict[str, Any]] = {}
        self.lock = threading.RLock()
        self.sink: Callable[[str, str, Any, Any], None] | None = None
        self.synced = threading.Event()
        self.resource_version = ""
        self.relists = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.forbidden = False

    @staticmethod
    def key(obj: Mapping[str, Any]) -> str:
        md = obj.get("metadata") or {}
        ns = md.get("namespace")
        return f"{ns}/{md.get('name')}" if ns else str(md.get("name"))

    def attach(self, sink: Callable[[str, str, Any, Any], None]) -> None:
        """Deliver the current store as ADDED events, then every change."""
        with self.lock:
            self.sink = sink
            for obj in list(self.store.values()):
                sink("ADDED", self.kind, None, obj)

    def _emit(self, etype: str, old: Any, new: Any) -> None:
        sink = self.sink
        if sink is not None:
            sink(etype, self.kind, old, new)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.kind}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _list(self) -> None:
        items: dict[str, dict[str, Any]] = {}
        cont = None
        rv = ""
        while True:
            q = {"limit": self.page_size, "continue": cont, "fieldSelector": self.field_selector, "labelSelector": self.label_selector}
            data = self.client.request("GET", self.path, query=q, timeout=60)
            for it in data.get("items") or []:
                _strip(it)
                it.setdefault("kind", self.kind)
                it.setdefault("apiVersion", data.get("apiVersion", "v1"))
                items[self.key(it)] = it
            meta = data.get("metadata") or {}
            rv = meta.get("resourceVersion") or rv
            cont = meta.get("continue")
            if not cont:
                break
        with self.lock:
            old = self.store
            self.store = items
            self.resource_version = rv
            for k, obj in items.items():
                prev = old.get(k)
                if prev is None:
                    self._emit("ADDED", None, obj)
                elif (prev.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get("resourceVersion"):
                    self._emit("MODIFIED", prev, obj)
            for k, prev in old.items():
                if k not in items:
                    self._emit("DELETED", prev, None)
        self.synced.set()

    def _watch(self) -> bool:
        """Watch from the last resourceVersion; False when a relist is needed (410 Gone)."""
        q = {
            "watch": "true",
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": random.randint(300, 600),
            "fieldSelector": self.field_selector,
            "labelSelector": self.label_selector,
        }
        try:
            resp = self.client.request("GET", self.path, query=q, timeout=None, stream=True)
        except ApiError as e:
            if e.status == 410:
                return False
            raise
        try:
            buf = b""
            for chunk in resp.stream(65536, decode_content=True):
                if self._stop.is_set():
                    return True
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    if not self._handle(ev):
                        return False
        finally:
            resp.release_conn()
        return True

    def _handle(self, ev: Mapping[str, Any]) -> bool:
        etype = ev.get("type")
        obj = ev.get("object") or {}
        if etype == "ERROR":
            code = obj.get("code")
            if code == 410:
                return False
            raise ApiError(int(code or 500), obj, "WATCH", self.path)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if etype == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return True
        _strip(obj)
        obj.setdefault("kind", self.kind)
        k = self.key(obj)
        with self.lock:
            prev = self.store.get(k)
            if etype == "DELETED":
                self.store.pop(k, None)
                self._emit("DELETED", prev or obj, None)
            else:
                self.store[k] = obj
                self._emit("ADDED" if prev is None else "MODIFIED", prev, obj)
            if rv:
                self.resource_version = rv
        return True

    def _run(self) -> None:
        backoff = 0.5
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    self._list()
                    need_list = False
                    backoff = 0.5
                if not self._watch():
                    log.info("watch of %s expired (410 Gone): relisting", self.kind)
                    self.relists += 1
                    need_list = True
                backoff = 0.5
            except ApiError as e:
                if e.status in (401, 403):
                    if not self.forbidden:
                        log.error("not allowed to list/watch %s: %s", self.kind, e)
                    self.forbidden = True
                    if self.kind not in ("Node", "Pod"):
                        self.synced.set()  # optional kind: nothing to wait for
                    # Node and Pod are essential: stay not ready (/readyz 503) and keep trying
                log.debug("informer %s: %s", self.kind, e)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
            except Exception as e:  # connection refused (API server restarting), timeouts...
                log.debug("informer %s: %s", self.kind, e)
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)


class KubeObjects:
    """The SDK's ObjectClient on a real cluster: reads from informer caches when the kind is
    watched, otherwise from the API server; writes go to the API server."""

    def __init__(self, cluster: KubernetesCluster) -> None:
        self._c = cluster

    def _res(self, api_version: str, kind: str) -> tuple[str, str, bool]:
        return self._c.resolve(api_version, kind)

    def _cache_key(self, api_version: str, kind: str, name: str, namespace: str | None) -> str:
        try:
            namespaced = self._res(api_version, kind)[2]
        except KeyError:
            namespaced = bool(namespace)
        return f"{namespace or 'default'}/{name}" if namespaced else name

    def _remember(self, kind: str, obj: Mapping[str, Any]) -> None:
        """Write-through: a write's response updates the informer cache at once (if newer), so a
        plugin's next read sees its own write even before the watch event arrives."""
        inf = self._c.informers.get(kind)
        if inf is None or not isinstance(obj, Mapping) or not obj.get("metadata"):
            return
        o = dict(obj)
        o.setdefault("kind", kind)
        key = Informer.key(o)
        with inf.lock:
            cur = inf.store.get(key)
            try:
                newer = cur is None or int((o["metadata"] or {}).get("resourceVersion") or 0) >= int((cur.get("metadata") or {}).get("resourceVersion") or 0)
            except ValueError:
                newer = True
            if newer:
                inf.store[key] = o

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        inf = self._c.informer_for(kind, api_version)
        if inf is not None and inf.synced.is_set() and not inf.forbidden:
            with inf.lock:
                obj = inf.store.get(self._cache_key(api_version, kind, name, namespace))
            if obj is None:
                raise ObjectNotFound(f'{kind} "{name}" not found')
            return json.loads(json.dumps(obj))
        gv, plural, namespaced = self._res(api_version, kind)
        try:
            return self._c.client.request("GET", _path(gv, plural, namespaced, namespace or "default", name))
        except ApiError as e:
            if e.status == 404:
                raise ObjectNotFound(str(e)) from None
            raise

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        inf = self._c.informer_for(kind, api_version)
        if inf is not None and inf.synced.is_set() and not inf.forbidden:
            with inf.lock:
                items = list(inf.store.values())
            out = []
            for o in items:
                md = o.get("metadata") or {}
                if namespace is not None and md.get("namespace") != namespace:
                    continue
                if label_selector and any((md.get("labels") or {}).get(k) != v for k, v in label_selector.items()):
                    continue
                out.append(json.loads(json.dumps(o)))
            return out
        gv, plural, namespaced = self._res(api_version, kind)
        sel = ",".join(f"{k}={v}" for k, v in (label_selector or {}).items()) or None
        data = self._c.client.request("GET", _path(gv, plural, namespaced and namespace is not None, namespace), query={"labelSelector": sel})
        return list(data.get("items") or [])

    def patch(self, api_version: str, kind: str, name: str, patch: Mapping[str, Any], namespace: str | None = None, *, resource_version: str | None = None, subresource: str | None = None) -> dict[str, Any]:
        gv, plural, namespaced = self._res(api_version, kind)
        body = dict(patch)
        if resource_version is not None:
            md = dict(body.get("metadata") or {})
            md["resourceVersion"] = resource_version
            body["metadata"] = md
        path = _path(gv, plural, namespaced, namespace or "default", name, subresource)
        try:
            out = self._c.client.request("PATCH", path, body=body, content_type="application/merge-patch+json")
        except ApiError as e:
            if e.status == 404:
                raise ObjectNotFound(str(e)) from None
            if e.status == 409:
                # refresh the cache so the caller's retry reads the current version
                try:
                    self._remember(kind, self._c.client.request("GET", path))
                except Exception:
                    pass
                raise ObjectConflict(str(e)) from None
            raise
        self._remember(kind, out)
        return out

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        gv, plural, namespaced = self._res(api_version, kind)
        try:
            self._c.client.request("DELETE", _path(gv, plural, namespaced, namespace or "default", name))
        except ApiError as e:
            if e.status == 404:
                raise ObjectNotFound(str(e)) from None
            raise


class KubernetesCluster:
    """The Cluster protocol on a real API server."""

    def __init__(
        self,
        client: KubeClient,
        *,
        kinds: Iterable[str] = (),
        reporting_controller: str = "kubesched",
        instance: str | None = None,
        bind_attempts: int = 5,
        writers: int = 4,
    ) -> None:
        self.client = client
        self.reporting_controller = reporting_controller
        self.instance = instance or f"{reporting_controller}-{socket.gethostname()}"
        self.bind_attempts = bind_attempts
        self.objects = KubeObjects(self)
        self._custom: dict[tuple[str, str], tuple[str, str, bool]] = {}
        self.informers: dict[str, Informer] = {}
        self._lazy_lock = threading.Lock()
        self._started = False
        self._sink: Callable[[str, str, Any, Any], None] | None = None
        self._no_informer: set[str] = set()
        want = ["Node", "Pod", *[k for k in kinds if k not in ("Node", "Pod")]]
        for kind in dict.fromkeys(want):
            try:
                gv, plural, _ns = self.resolve("", kind)
            except KeyError:
                log.warning("no API resource found for kind %s; plugins reading it will see nothing", kind)
                continue
            fs = "status.phase!=Succeeded,status.phase!=Failed" if kind == "Pod" else None
            self.informers[kind] = Informer(client, kind, gv, plural, field_selector=fs)
        self._writes: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._writes_pending = 0  # queued or being sent (flush waits for 0)
        self._writes_lock = threading.Lock()
        #: events and status writes go through a small pool, off the scheduling loop
        self._writers = [
            threading.Thread(target=self._write_loop, name=f"status-writer-{i}", daemon=True) for i in range(writers)
        ]
        for t in self._writers:
            t.start()
        self.stats = {"binds": 0, "bind_retries": 0, "bind_conflicts": 0, "events": 0}

    # discovery ------------------------------------------------------------------------------------
    def resolve(self, api_version: str, kind: str) -> tuple[str, str, bool]:
        if kind in BUILTIN_RESOURCES and (not api_version or api_version == BUILTIN_RESOURCES[kind][0]):
            return BUILTIN_RESOURCES[kind]
        key = (api_version, kind)
        if key in self._custom:
            return self._custom[key]
        groups = [api_version] if api_version else []
        if not groups:
            try:
                data = self.client.request("GET", "/apis")
            except ApiError:
                data = {}
            for g in data.get("groups") or []:
                pv = (g.get("preferredVersion") or {}).get("groupVersion")
                if pv:
                    groups.append(pv)
        for gv in groups:
            try:
                res = self.client.request("GET", _base(gv))
            except ApiError:
                continue
            for r in res.get("resources") or []:
                if r.get("kind") == kind and "/" not in r.get("name", ""):
                    out = (gv, r["name"], bool(r.get("namespaced")))
                    self._custom[key] = out
                    return out
        raise KeyError(f"{api_version} {kind}".strip())

    # lifecycle --------------------------------------------------------------------------------------
    def start_informers(self) -> None:
        self._started = True
        for inf in self.informers.values():
            inf.start()

    def informer_for(self, kind: str, api_version: str = "", wait: float = 30.0) -> Informer | None:
        """The informer of ``kind``; one is started on first use, so every kind a plugin reads
        through ``handle.objects`` is served from a watched cache instead of an API request per
        call. None when the kind cannot be listed (then reads go to the API server)."""
        inf = self.informers.get(kind)
        if inf is not None or not self._started or kind in self._no_informer:
            return inf
        with self._lazy_lock:
            inf = self.informers.get(kind)
            if inf is None:
                try:
                    gv, plural, _ns = self.resolve(api_version, kind)
                except KeyError:
                    self._no_informer.add(kind)
                    return None
                inf = Informer(self.client, kind, gv, plural)
                self.informers[kind] = inf
                inf.start()
                log.info("started an informer for %s (read by a plugin)", kind)
                if self._sink is not None:
                    inf.synced.wait(wait)
                    inf.attach(self._sink)
        inf.synced.wait(wait)
        if inf.forbidden:
            self._no_informer.add(kind)
        return inf

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        for inf in self.informers.values():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not inf.synced.wait(left):
                return False
        return True

    def synced(self) -> bool:
        return all(inf.synced.is_set() for inf in self.informers.values())

    def start(self, sink: Callable[[str, str, Any, Any], None]) -> None:
        """Replay the caches to ``sink`` and stream every change (informers must be running)."""
        self._sink = sink
        for kind in ["Node", *[k for k in self.informers if k not in ("Node", "Pod")], "Pod"]:
            inf = self.informers.get(kind)
            if inf is not None:
                inf.attach(sink)

    def stop(self, flush: float = 10.0) -> None:
        for inf in self.informers.values():
            inf.stop()
        self.flush(flush)
        for _ in self._writers:
            self._writes.put(None)
        for t in self._writers:
            t.join(1.0)

    # writes -----------------------------------------------------------------------------------------
    def bind(self, pod: Pod, node_name: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding"
        delay = 0.2
        for attempt in range(1, self.bind_attempts + 1):
            try:
                self.client.request("POST", path, body=body, timeout=30)
                self.stats["binds"] += 1
                return
            except ApiError as e:
                if e.status == 409:
                    if self._bound_to(pod, node_name):
                        self.stats["binds"] += 1
                        return  # an earlier attempt landed
                    self.stats["bind_conflicts"] += 1
                    raise ObjectConflict(str(e)) from None
                if e.status == 404:
                    raise ObjectNotFound(str(e)) from None
                if not _retryable(e) or attempt == self.bind_attempts:
                    raise
            except Exception as e:
                if not _retryable(e) or attempt == self.bind_attempts:
                    raise
            self.stats["bind_retries"] += 1
            time.sleep(delay)
            delay = min(delay * 2, 5.0)

    def _bound_to(self, pod: Pod, node_name: str) -> bool:
        for _ in range(5):
            try:
                cur = self.client.request("GET", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}")
            except ApiError as e:
                if e.status == 404:
                    return False
                time.sleep(0.5)
                continue
            except Exception:
                time.sleep(0.5)
                continue
            md = cur.get("metadata") or {}
            return md.get("uid") == pod.uid and (cur.get("spec") or {}).get("nodeName") == node_name
        return False

    #: How long one event / pod status write is retried through API server errors and outages
    #: before it is dropped (client-go's event sink tries 12 times, 10s apart). Writes are
    #: sent in order by one worker, so the ones behind wait; shutdown waits on them only for
    #: ``flush``'s timeout.
    write_retry_seconds = 120.0

    def _queue_write(self, fn: Callable[[], None]) -> None:
        with self._writes_lock:
            self._writes_pending += 1
        self._writes.put(fn)

    def _write_loop(self) -> None:
        while True:
            fn = self._writes.get()
            if fn is None:
                return
            try:
                self._write_one(fn)
            finally:
                with self._writes_lock:
                    self._writes_pending -= 1

    def _write_one(self, fn: Callable[[], None]) -> None:
        deadline = time.monotonic() + self.write_retry_seconds
        delay = 0.5
        while True:
            try:
                fn()
                break
            except ApiError as e:
                if e.status in (404, 409, 422):  # the pod is gone or changed meanwhile
                    log.debug("status write dropped: %s", e)
                    break
                if not _retryable(e):  # 401/403 (a missing RBAC rule), 400: never silently
                    log.warning("status write dropped: %s", e)
                    break
                err: Exception = e
            except Exception as e:
                if not _retryable(e):
                    log.warning("status write dropped: %s", e)
                    break
                err = e
            if time.monotonic() + delay > deadline:
                log.warning("status write dropped after retrying for %.0fs: %s", self.write_retry_seconds, err)
                break
            log.debug("status write failed (retrying in %.1fs): %s", delay, err)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)

    def event(self, regarding: Mapping[str, Any], event_type: str, reason: str, action: str, note: str, related: Mapping[str, Any] | None = None) -> None:
        md = regarding.get("metadata") or {}
        ns = md.get("namespace") or "default"
        body: dict[str, Any] = {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": f"{md.get('name')}.{time.time_ns():x}", "namespace": ns},
            "eventTime": rfc3339(micro=True),
            "reportingController": self.reporting_controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "type": event_type,
            "note": note[:1024],
            "regarding": {
                "apiVersion": regarding.get("apiVersion", "v1"),
                "kind": regarding.get("kind", "Pod"),
                "name": md.get("name"),
                "namespace": ns,
                "uid": md.get("uid"),
                "resourceVersion": md.get("resourceVersion"),
            },
        }
        if related is not None:
            rmd = related.get("metadata") or {}
            body["related"] = {"apiVersion": related.get("apiVersion", "v1"), "kind": related.get("kind"), "name": rmd.get("name"), "namespace": rmd.get("namespace"), "uid": rmd.get("uid")}

        def write() -> None:
            self.client.request("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", body=body, limit="events", decode=False)
            self.stats["events"] += 1

        self._queue_write(write)

    def update_pod_condition(self, pod: Pod, condition: Mapping[str, Any], nominated_node_name: str | None) -> None:
        cond = {"lastProbeTime": None, "lastTransitionTime": rfc3339(), **condition}
        status: dict[str, Any] = {"conditions": [cond]}
        if nominated_node_name:
            status["nominatedNodeName"] = nominated_node_name
        patch = {"metadata": {"uid": pod.uid}, "status": status}
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status"

        def write() -> None:
            self.client.request("PATCH", path, body=patch, content_type="application/strategic-merge-patch+json")

        self._queue_write(write)

    def annotate_pod(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        path = f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}"
        patch = {"metadata": {"annotations": dict(annotations)}}

        def write() -> None:
            self.client.request("PATCH", path, body=patch, content_type="application/merge-patch+json")

        self._queue_write(write)

    def flush(self, timeout: float = 10.0) -> None:
        """Wait (at most ``timeout`` seconds) until queued events and status writes are sent."""
        deadline = time.monotonic() + timeout
        while self._writes_pending and time.monotonic() < deadline:
            time.sleep(0.02)
