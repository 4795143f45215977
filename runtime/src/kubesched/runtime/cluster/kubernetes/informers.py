"""Informers: list (paged) + watch of one resource into a cache, delivering every change.

A watch starts from the list's resourceVersion with bookmarks; a watch that ends is resumed
from the last resourceVersion; ``410 Gone`` (the version was compacted) relists and turns the
difference into ADDED / MODIFIED / DELETED events, so nothing is missed. Failures are retried
with backoff for as long as the informer runs.

The cache is also the scheduler's assume cache (Go's ``assumecache``): ``KubeObjects`` puts the
response of each write into it at once. So, as Go's assume cache does, a watched or listed object
replaces a cached one only when its resourceVersion is higher (both parsed as integers): the
watch event of an earlier write (or a list served from a lagging watch cache) never undoes a
later write the scheduler already cached. DELETED always applies. The rule holds for every kind:
one API server's resourceVersions grow per object, so it drops nothing from an in-order stream.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kubesched.sdk.readonly import read_only

from .codec import loads
from .discovery import api_path
from .errors import Forbidden, Gone, Unauthorized, error_for
from .problems import ServerProblems
from .retry import Backoff, retry

if TYPE_CHECKING:
    from .api import KubeClient

__all__ = ["Informer"]

log = logging.getLogger("kubesched.kubernetes")

#: a failed list or watch is tried again after 0.5 s, doubling up to 30 s; reset by a success
RELIST_BACKOFF = Backoff(0.5, 30.0, jitter=0.2)


def _strip(obj: Any) -> None:
    """Drop ``metadata.managedFields`` from cached objects, as kube-scheduler's informers do
    (about half of a Pod's or Node's size; nothing in scheduling reads it)."""
    md = obj.get("metadata") if isinstance(obj, dict) else None
    if md:
        md.pop("managedFields", None)


def version(obj: Mapping[str, Any] | None) -> int | None:
    """An object's ``metadata.resourceVersion`` as an integer; None when absent or not a number."""
    rv = ((obj or {}).get("metadata") or {}).get("resourceVersion")
    try:
        return int(rv) if rv is not None else None
    except (TypeError, ValueError):
        return None


def is_older(obj: Mapping[str, Any], cached: Mapping[str, Any] | None) -> bool:
    """Whether ``obj`` is not newer than ``cached`` (both resourceVersions parsed): then it must
    not replace it."""
    if cached is None:
        return False
    new, old = version(obj), version(cached)
    return new is not None and old is not None and new <= old


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
        page_size: int = 500,
        problems: ServerProblems | None = None,
    ) -> None:
        self.client = client
        self.kind = kind
        self.path = api_path(gv, plural, False)
        self.field_selector = field_selector
        self.page_size = page_size
        self.store: dict[str, dict[str, Any]] = {}
        #: how many changes the store had (each one is emitted)
        self.writes = 0
        self.lock = threading.RLock()
        self.sink: Callable[[str, str, Any, Any], None] | None = None
        self.synced = threading.Event()
        self.resource_version = ""
        self._need_list = True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.forbidden = False
        #: where failures are reported (shared by a cluster's informers: one line per error)
        self.problems = problems if problems is not None else ServerProblems(client)
        self._failures = 0  # consecutive failed tries (the backoff step)

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
        self.writes += 1  # every change of the store comes here (KubeObjects.kind_generation)
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
            q = {"limit": self.page_size, "continue": cont, "fieldSelector": self.field_selector}
            data = self.client.request("GET", self.path, query=q, timeout=60)
            for it in data.get("items") or []:
                _strip(it)
                it.setdefault("kind", self.kind)
                it.setdefault("apiVersion", data.get("apiVersion", "v1"))
                items[self.key(it)] = read_only(it)  # the scheduler's views share it
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
                if prev is not None and version(prev) != version(obj) and is_older(obj, prev):
                    items[k] = prev  # the scheduler's own later write: keep it
                    continue
                if prev is None:
                    self._emit("ADDED", None, obj)
                elif (prev.get("metadata") or {}).get("resourceVersion") != (obj.get("metadata") or {}).get("resourceVersion"):
                    self._emit("MODIFIED", prev, obj)
            for k, prev in old.items():
                if k not in items:
                    self._emit("DELETED", prev, None)
        self.problems.ok(self.kind)
        self.synced.set()

    def _watch(self) -> bool:
        """Watch from the last resourceVersion; False when a relist is needed (410 Gone)."""
        q = {
            "watch": "true",
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": random.randint(300, 600),
            "fieldSelector": self.field_selector,
        }
        try:
            resp = self.client.request("GET", self.path, query=q, timeout=None, stream=True)
        except Gone:
            return False
        self.problems.ok(self.kind)
        try:
            buf = b""  # the start of an event whose end has not come yet
            for chunk in resp.stream(65536, decode_content=True):
                if self._stop.is_set():
                    return True
                if b"\n" not in chunk:
                    buf += chunk
                    continue
                lines = (buf + chunk if buf else chunk).split(b"\n")
                buf = lines.pop()
                for line in lines:
                    if line and not line.isspace() and not self._handle(loads(line)):
                        return False
        finally:
            resp.release_conn()
        return True

    def _handle(self, ev: Mapping[str, Any]) -> bool:
        etype = ev.get("type")
        obj = ev.get("object") or {}
        if etype == "ERROR":
            err = error_for(int(obj.get("code") or 500), obj, "WATCH", self.path)
            if isinstance(err, Gone):
                return False
            raise err
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if etype == "BOOKMARK":
            if rv:
                self.resource_version = rv
            return True
        _strip(obj)
        obj.setdefault("kind", self.kind)
        obj = read_only(obj)  # the scheduler's views share it
        k = self.key(obj)
        with self.lock:
            prev = self.store.get(k)
            if etype == "DELETED":
                self.store.pop(k, None)
                self._emit("DELETED", prev or obj, None)
            elif not is_older(obj, prev):  # else the cache holds this write or a later one already
                self.store[k] = obj
                self._emit("ADDED" if prev is None else "MODIFIED", prev, obj)
            if rv:
                self.resource_version = rv
        return True

    def _step(self) -> None:
        """One list, or one watch until it ends."""
        if self._need_list:
            self._list()
            self._need_list = False
        elif not self._watch():
            log.info("watch of %s expired (410 Gone): relisting", self.kind)
            self._need_list = True

    @property
    def error(self) -> str | None:
        """The last list/watch failure, in words, while it lasts (None once listed again)."""
        return self.problems.error_of(self.kind)

    def _failed(self, e: Exception, delay: float) -> None:
        self._failures += 1
        if isinstance(e, (Unauthorized, Forbidden)):
            self.forbidden = True
            if self.kind not in ("Node", "Pod"):
                self.synced.set()  # optional kind: nothing to wait for
            # Node and Pod are essential: stay not ready (/readyz 503) and keep trying
        # every failure is logged at the default verbosity, once per kind of error and
        # backoff step over all the informers (connection refused, 401, 5xx...)
        self.problems.failed(self.kind, e, self._failures, delay)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._failures = 0  # a success ends the backoff: the next failure is step 1
            try:
                # every error is tried again; only a stop (the wait returns True) ends retry
                retry(self._step, RELIST_BACKOFF, retry_on=None, wait=self._stop.wait, on_retry=self._failed)
            except Exception:
                return
