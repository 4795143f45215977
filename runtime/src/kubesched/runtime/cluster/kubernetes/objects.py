"""The SDK's ObjectClient on a real cluster: what plugins reach through ``handle.objects``."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubesched.sdk import ObjectNotFound
from kubesched.sdk.readonly import read_only

from .codec import copy_json
from .discovery import api_path
from .errors import Conflict
from .informers import Informer, is_older

if TYPE_CHECKING:
    from .cluster import KubernetesCluster

__all__ = ["KubeObjects"]


class KubeObjects:
    """Reads from informer caches when the kind is watched (an informer is started on a kind's
    first read), otherwise from the API server; writes go to the API server. Errors are the
    SDK's: ``ObjectNotFound`` (404), ``ObjectConflict`` (409)."""

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

    def _remember(self, kind: str, obj: Mapping[str, Any], *, created: bool = False) -> None:
        """Write-through (Go's ``AssumeCache.Assume``): a write's response goes into the informer
        cache at once when it is newer than the cached object, so a plugin's next read sees its
        own write before the watch event arrives, and the change is delivered to the informer's
        sink as the watch would deliver it (ADDED, or MODIFIED from the cached object; the sink
        posts to the scheduler loop's inbox, so any thread may call it). The watch event of the
        same write comes later at the same resourceVersion and the informer drops it. As Go's
        ``Assume`` (``ErrNotFound``), a write never brings back an object the cache does not hold
        (deleted meanwhile, or outside the informer's selector, such as a finished pod); only a
        ``create`` adds one."""
        inf = self._c.informers.get(kind)
        if inf is None or not isinstance(obj, Mapping) or not obj.get("metadata"):
            return
        o = dict(obj)
        o.setdefault("kind", kind)
        key = Informer.key(o)
        with inf.lock:
            cur = inf.store.get(key)
            if (cur is None and not created) or is_older(o, cur):
                return
            ro = read_only(o)
            inf.store[key] = ro
            inf._emit("ADDED" if cur is None else "MODIFIED", cur, ro)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        inf = self._c.informer_for(kind, api_version)
        if inf is not None and inf.synced.is_set() and not inf.forbidden:
            with inf.lock:
                obj = inf.store.get(self._cache_key(api_version, kind, name, namespace))
            if obj is None:
                raise ObjectNotFound(f'{kind} "{name}" not found')
            return copy_json(obj)
        gv, plural, namespaced = self._res(api_version, kind)
        return self._c.client.request("GET", api_path(gv, plural, namespaced, namespace or "default", name))

    def peek(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Mapping[str, Any] | None:
        """The cached object itself (read-only, no copy), or None when it is not cached (the
        object store's ``peek``); without a usable informer, ``get``'s answer."""
        inf = self._c.informer_for(kind, api_version)
        if inf is not None and inf.synced.is_set() and not inf.forbidden:
            with inf.lock:
                obj: Mapping[str, Any] | None = inf.store.get(self._cache_key(api_version, kind, name, namespace))
            return obj
        try:
            return self.get(api_version, kind, name, namespace)
        except ObjectNotFound:
            return None

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
                out.append(copy_json(o))
            return out
        gv, plural, namespaced = self._res(api_version, kind)
        sel = ",".join(f"{k}={v}" for k, v in (label_selector or {}).items()) or None
        data = self._c.client.request("GET", api_path(gv, plural, namespaced and namespace is not None, namespace), query={"labelSelector": sel})
        return list(data.get("items") or [])

    def peek_all(self, api_version: str, kind: str) -> builtins.list[Any]:
        """Every cached object of a kind itself, without copies (the object store's ``peek_all``):
        read-only views that callers must not mutate. From the API server (copies) when the kind
        has no usable informer."""
        inf = self._c.informer_for(kind, api_version)
        if inf is not None and inf.synced.is_set() and not inf.forbidden:
            with inf.lock:
                return list(inf.store.values())
        return self.list(api_version, kind)

    def kind_generation(self, api_version: str, kind: str) -> tuple[int, int] | None:
        """Changes so far of the kind's informer cache (the object store's ``kind_generation``):
        equal values mean the cached objects did not change; None without a usable informer."""
        inf = self._c.informers.get(kind)
        if inf is None or not inf.synced.is_set() or inf.forbidden:
            return None
        return (id(inf), inf.writes)

    def patch(self, api_version: str, kind: str, name: str, patch: Mapping[str, Any], namespace: str | None = None, *, resource_version: str | None = None, subresource: str | None = None) -> dict[str, Any]:
        gv, plural, namespaced = self._res(api_version, kind)
        body = dict(patch)
        if resource_version is not None:
            md = dict(body.get("metadata") or {})
            md["resourceVersion"] = resource_version
            body["metadata"] = md
        path = api_path(gv, plural, namespaced, namespace or "default", name, subresource)
        try:
            out = self._c.client.request("PATCH", path, body=body, content_type="application/merge-patch+json")
        except Conflict:
            # refresh the cache so the caller's retry reads the current version
            try:
                self._remember(kind, self._c.client.request("GET", path))
            except Exception:
                pass
            raise
        self._remember(kind, out)
        return out

    def create(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """POST the object (``metadata.generateName`` names it when it has no name); the created
        object goes into the informer cache at once, as a patch's does."""
        api_version = str(obj.get("apiVersion") or "v1")
        kind = str(obj.get("kind") or "")
        gv, plural, namespaced = self._res(api_version, kind)
        namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
        out = self._c.client.request("POST", api_path(gv, plural, namespaced, namespace), body=dict(obj))
        self._remember(kind, out, created=True)
        return out

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        gv, plural, namespaced = self._res(api_version, kind)
        self._c.client.request("DELETE", api_path(gv, plural, namespaced, namespace or "default", name))
