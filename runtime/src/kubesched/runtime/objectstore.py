"""An in-memory API object store: the simulated cluster's database and the test kit's.

Objects are API dicts keyed by (group, kind, namespace, name). It implements the SDK's
``ObjectClient`` (get/list/patch/delete) with resourceVersions, JSON merge patches and
optimistic concurrency, and notifies subscribers of every change.

Stored objects are read-only (:func:`kubesched.sdk.readonly.read_only`, made once per write; a
patch shares the parts it does not change), so subscribers and the scheduler's views share them
without copies; ``get`` and ``list`` return mutable deep copies.
"""

from __future__ import annotations

import copy
import hashlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from kubesched.sdk import ObjectConflict, ObjectNotFound
from kubesched.sdk.readonly import ReadOnlyDict, read_only

from .kinds import CLUSTER_SCOPED_KINDS

__all__ = ["ObjectInvalid", "ObjectStore", "group_of", "merge_patch"]

#: (event type, kind, old object or None, new object or None); event type is ADDED/MODIFIED/DELETED
Listener = Callable[[str, str, "dict[str, Any] | None", "dict[str, Any] | None"], None]


def group_of(api_version: str) -> str:
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


#: values a merge patch takes as they are (no copy)
_SCALARS = (str, int, float, bool)


#: names.SimpleNameGenerator: generateName is cut to 63 - 5 characters, then 5 are added
_MAX_GENERATED_BASE = 58
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _generated_suffix(seed: str) -> str:
    h = hashlib.sha256(seed.encode()).digest()
    return "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in h[:5])


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if type(patch) in _SCALARS:
        return patch
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, Mapping) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif type(v) in _SCALARS:
            out[k] = v
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _merged(target: Any, patch: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`merge_patch` of a mapping patch, read-only: the parts the patch does not touch are
    the target's own (already read-only) and the patch's values are copied read-only, so the
    result needs no second pass and the patch's lists and maps no deep copy."""
    out = dict(target) if isinstance(target, Mapping) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif type(v) in _SCALARS:
            out[k] = v
        elif isinstance(v, Mapping):
            out[k] = _merged(out.get(k), v)
        else:
            out[k] = read_only(v)
    return ReadOnlyDict(out)


class ObjectInvalid(ValueError):
    """The write was rejected as the API server rejects an invalid object (HTTP 422); ``str()``
    is its message (``<Kind>.<group> "<name>" is invalid: <field>: <error>``)."""


#: validator(old, new): raises :class:`ObjectInvalid` when ``new`` may not replace ``old``
Validator = Callable[[Mapping[str, Any], Mapping[str, Any]], None]


class ObjectStore:
    """Thread-safe in-memory objects. ``kind`` names are as in manifests (``Pod``, ``PodGroup``)."""

    def __init__(self) -> None:
        self._objs: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        #: (group, kind) -> keys, so list() does not scan every object
        self._by_kind: dict[tuple[str, str], dict[tuple[str, str, str, str], None]] = {}
        self._rv = 0
        self._lock = threading.RLock()
        #: a tuple, rebuilt on subscribe: a write notifies without copying the list
        self._listeners: tuple[Listener, ...] = ()
        #: (group, kind) -> how many writes of that kind there were (:meth:`kind_generation`)
        self._writes: dict[tuple[str, str], int] = {}
        #: (group, kind) -> the update validator :meth:`add_validator` set
        self._validators: dict[tuple[str, str], Validator] = {}

    # internals ----------------------------------------------------------------------------
    @staticmethod
    def _key(api_version: str, kind: str, name: str, namespace: str | None) -> tuple[str, str, str, str]:
        ns = "" if kind in CLUSTER_SCOPED_KINDS else (namespace or "default")
        return (group_of(api_version), kind, ns, name)

    def _next_rv(self) -> str:
        self._rv += 1
        return str(self._rv)

    def _bump(self, key: tuple[str, str, str, str]) -> None:
        gk = (key[0], key[1])
        self._writes[gk] = self._writes.get(gk, 0) + 1

    def kind_generation(self, api_version: str, kind: str) -> int:
        """How many times objects of ``kind`` were created, replaced, patched or deleted: equal
        values mean no object of the kind changed in between (a reader that derives state from
        the kind's objects skips re-reading them)."""
        return self._writes.get((group_of(api_version), kind), 0)

    def add_validator(self, api_version: str, kind: str, validator: Validator) -> None:
        """Check every update and patch of ``kind`` (the API server's update validation): the
        write raises :class:`ObjectInvalid` and changes nothing when ``validator`` raises it."""
        self._validators[(group_of(api_version), kind)] = validator

    def subscribe(self, listener: Listener) -> None:
        self._listeners = (*self._listeners, listener)

    def _notify(self, etype: str, kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for listener in self._listeners:
            listener(etype, kind, old, new)

    # writes -------------------------------------------------------------------------------
    def create(self, obj: Mapping[str, Any], *, notify: bool = True) -> dict[str, Any]:
        """Add a new object; raises ``ObjectConflict`` if it exists. Without a name,
        ``metadata.generateName`` (cut to 58 characters) gets 5 characters as the API server
        adds, here derived from the store's resourceVersion so runs repeat. Returns the stored
        (read-only) object."""
        o = dict(obj)
        kind = str(o.get("kind") or "")
        md = dict(o.get("metadata") or {})
        o["metadata"] = md
        if kind not in CLUSTER_SCOPED_KINDS:
            md.setdefault("namespace", "default")
        api_version = str(o.get("apiVersion") or "v1")
        with self._lock:
            if not md.get("name") and md.get("generateName"):
                base = str(md["generateName"])[:_MAX_GENERATED_BASE]
                n = self._rv
                while True:
                    n += 1
                    md["name"] = base + _generated_suffix(f"{base}/{n}")
                    if self._key(api_version, kind, md["name"], md.get("namespace")) not in self._objs:
                        break
            key = self._key(api_version, kind, str(md.get("name") or ""), md.get("namespace"))
            if key in self._objs:
                raise ObjectConflict(f'{kind} "{md.get("name")}" already exists')
            md["resourceVersion"] = self._next_rv()
            md.setdefault("uid", f"uid-{kind.lower()}-{md.get('namespace', '')}-{md.get('name')}-{self._rv}")
            o = read_only(o)
            self._objs[key] = o
            gk = (key[0], key[1])
            self._by_kind.setdefault(gk, {})[key] = None
            self._writes[gk] = self._writes.get(gk, 0) + 1
        if notify:
            self._notify("ADDED", kind, None, o)
        return o

    def update(self, obj: Mapping[str, Any], *, notify: bool = True) -> dict[str, Any]:
        """Replace an object (no resourceVersion check)."""
        o = dict(obj)
        kind = str(o.get("kind") or "")
        md = dict(o.get("metadata") or {})
        o["metadata"] = md
        key = self._key(str(o.get("apiVersion") or "v1"), kind, str(md.get("name") or ""), md.get("namespace"))
        with self._lock:
            old = self._objs.get(key)
            if old is None:
                raise ObjectNotFound(f'{kind} "{md.get("name")}" not found')
            check = self._validators.get((key[0], key[1]))
            if check is not None:
                check(old, o)
            md["resourceVersion"] = self._next_rv()
            o = read_only(o)
            self._objs[key] = o
            self._bump(key)
        if notify:
            self._notify("MODIFIED", kind, old, o)
        return o

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        subresource: str | None = None,
    ) -> dict[str, Any]:
        """``subresource`` is accepted for compatibility; the whole patch is applied. Returns a
        mutable copy of the new object."""
        return copy.deepcopy(self.apply_patch(api_version, kind, name, patch, namespace, resource_version=resource_version))

    def apply_patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Mapping[str, Any],
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        """:meth:`patch` returning the stored (read-only) object itself, no copy."""
        key = self._key(api_version, kind, name, namespace)
        with self._lock:
            old = self._objs.get(key)
            if old is None:
                raise ObjectNotFound(f'{kind} "{name}" not found')
            if resource_version is not None and old["metadata"].get("resourceVersion") != resource_version:
                raise ObjectConflict(
                    f'Operation cannot be fulfilled on {kind} "{name}": the object has been modified; '
                    "please apply your changes to the latest version and try again"
                )
            new = _merged(old, patch)
            check = self._validators.get((key[0], key[1]))
            if check is not None:
                check(old, new)
            new = ReadOnlyDict({**new, "metadata": ReadOnlyDict({**new["metadata"], "resourceVersion": self._next_rv()})})
            self._objs[key] = new
            self._bump(key)
        self._notify("MODIFIED", kind, old, new)
        return new

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        key = self._key(api_version, kind, name, namespace)
        with self._lock:
            old = self._objs.pop(key, None)
            self._by_kind.get((key[0], key[1]), {}).pop(key, None)
            if old is not None:
                self._bump(key)
        if old is None:
            raise ObjectNotFound(f'{kind} "{name}" not found')
        self._notify("DELETED", kind, old, None)

    # reads --------------------------------------------------------------------------------
    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        with self._lock:
            o = self._objs.get(self._key(api_version, kind, name, namespace))
        if o is None:
            raise ObjectNotFound(f'{kind} "{name}" not found')
        return copy.deepcopy(o)

    def peek(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The stored object itself (no copy, read-only), or None."""
        return self._objs.get(self._key(api_version, kind, name, namespace))

    def peek_all(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        """Every stored object of a kind itself (no copies, read-only)."""
        with self._lock:
            return [self._objs[key] for key in self._by_kind.get((group_of(api_version), kind), {})]

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        group = group_of(api_version)
        with self._lock:
            keys = self._by_kind.get((group, kind), {})
            items = [self._objs[key] for key in keys if namespace is None or key[2] == namespace]
        if label_selector:
            items = [
                o
                for o in items
                if all(((o.get("metadata") or {}).get("labels") or {}).get(k) == v for k, v in label_selector.items())
            ]
        return [copy.deepcopy(o) for o in items]
