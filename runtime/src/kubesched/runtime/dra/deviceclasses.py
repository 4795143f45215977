"""Extended resource name -> DeviceClass (DRAExtendedResource, beta and on in kube-scheduler v1.36).

A pod may ask for devices without a ResourceClaim by requesting an extended resource that a
DeviceClass names: explicitly (``spec.extendedResourceName``, e.g. ``example.com/gpu``) or
implicitly (``deviceclass.resource.kubernetes.io/<class name>``, always). NodeResourcesFit then
leaves that resource to DynamicResources on nodes whose allocatable does not list it, and
DynamicResources allocates devices of the class through a claim the scheduler creates.

Ports ``k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache`` (v0.36.3):
:class:`ExtendedResourceCache` is Go's ``ExtendedResourceCache`` (fed by DeviceClass add / update /
delete events; two classes naming the same extended resource: the newer ``creationTimestamp``
wins, then the lower name), and ``schedutil.IsDRAExtendedResourceName``.

:func:`resolver_for` gives the one resolver of an ObjectClient (``handle.objects``), shared by
every plugin and profile that reads through it, as Go's SharedDRAManager shares its
DeviceClassResolver. :meth:`DeviceClassResolver.refresh` feeds the cache from the client's
DeviceClasses: the changes since the last refresh become add / update / delete events (deletes,
then updates, then adds in ``(creationTimestamp, name)`` order, as an informer's initial list and
watch would deliver them). Callers refresh once per pod (PreFilter, SignPod, queueing hints).
A client with ``kind_generation(api_version, kind)`` (the ObjectStore, KubeObjects) tells how
many DeviceClass writes there were: while it is unchanged, a refresh returns at once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

__all__ = [
    "DEVICE_CLASS_API_VERSION",
    "DEVICE_CLASS_PREFIX",
    "DeviceClassResolver",
    "ExtendedResourceCache",
    "is_dra_extended_resource_name",
    "resolver_for",
]

#: resourceapi.ResourceDeviceClassPrefix: the implicit extended resource name of a class
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
DEVICE_CLASS_API_VERSION = "resource.k8s.io/v1"
_KIND = "DeviceClass"


_is_extended: Callable[[str], bool] | None = None


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName: an extended resource name, or the implicit
    ``deviceclass.resource.kubernetes.io/<class>`` name."""
    global _is_extended
    if name.startswith(DEVICE_CLASS_PREFIX):
        return True
    if _is_extended is None:
        # imported on first use: the noderesources package imports this module
        from kubesched.runtime.plugins.noderesources.pod_requests import is_extended_resource_name

        _is_extended = is_extended_resource_name
    return _is_extended(name)


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _explicit(obj: Mapping[str, Any]) -> str | None:
    """spec.extendedResourceName (nil when absent)."""
    v = (obj.get("spec") or {}).get("extendedResourceName")
    return None if v is None else str(v)


def _created(obj: Mapping[str, Any]) -> float:
    """metadata.creationTimestamp as seconds (Go compares UnixNano); a missing one sorts first."""
    ts = (obj.get("metadata") or {}).get("creationTimestamp")
    if not ts:
        return float("-inf")
    try:
        return datetime.fromisoformat(str(ts).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("-inf")


class ExtendedResourceCache:
    """Go's ExtendedResourceCache: extended resource name -> DeviceClass and class name ->
    explicit extended resource name, kept from DeviceClass events. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._resource_to_class: dict[str, Mapping[str, Any]] = {}
        self._class_to_resource: dict[str, str] = {}

    def get_device_class(self, resource_name: str) -> Mapping[str, Any] | None:
        """GetDeviceClass: the class serving ``resource_name``, or None."""
        return self._resource_to_class.get(resource_name)

    def get_extended_resource(self, class_name: str) -> str:
        """GetExtendedResource: the class's explicit extended resource name, or ``""``."""
        return self._class_to_resource.get(class_name, "")

    def __bool__(self) -> bool:
        return bool(self._resource_to_class)

    def on_add(self, obj: Mapping[str, Any]) -> None:
        self._update_resource_to_class(obj, None)
        self._update_class_to_resource(obj)

    def on_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        self._update_resource_to_class(new, old)
        self._update_class_to_resource(new)

    def on_delete(self, obj: Mapping[str, Any]) -> None:
        name = _name(obj)
        explicit = _explicit(obj)
        with self._lock:
            self._resource_to_class.pop(DEVICE_CLASS_PREFIX + name, None)
            if explicit is not None:
                self._resource_to_class.pop(explicit, None)
            self._class_to_resource.pop(name, None)

    def _update_resource_to_class(self, new: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
        """updateResourceName2class, with Go's early return: when another class already serves
        the same explicit name and is newer (or as new with a lower name), nothing changes, not
        even this class's implicit name."""
        explicit = _explicit(new)
        name = _name(new)
        with self._lock:
            same = self._resource_to_class.get(explicit) if explicit is not None else None
            if same is not None:
                a, b = _created(new), _created(same)
                if a < b:
                    return
                if a == b and name >= _name(same):
                    return
            if old is not None:
                self._resource_to_class.pop(DEVICE_CLASS_PREFIX + _name(old), None)
                old_explicit = _explicit(old)
                if old_explicit is not None:
                    self._resource_to_class.pop(old_explicit, None)
            if explicit is not None:
                self._resource_to_class[explicit] = new
            self._resource_to_class[DEVICE_CLASS_PREFIX + name] = new

    def _update_class_to_resource(self, obj: Mapping[str, Any]) -> None:
        explicit = _explicit(obj)
        with self._lock:
            if explicit is None:
                self._class_to_resource.pop(_name(obj), None)
            else:
                self._class_to_resource[_name(obj)] = explicit


class DeviceClassResolver(ExtendedResourceCache):
    """The cache fed from an ObjectClient's DeviceClasses (see the module docstring)."""

    def __init__(self, objects: Any) -> None:
        super().__init__()
        self._objects: Callable[[], Any] | None = None
        if objects is not None:
            try:
                self._objects = weakref.ref(objects)
            except TypeError:  # not weak-referenceable: held for the resolver's life
                self._objects = lambda: objects
        #: class name -> (uid, resourceVersion, object) as last seen
        self._seen: dict[str, tuple[Any, Any, Mapping[str, Any]]] = {}
        self._unavailable = False
        self._refresh_lock = threading.Lock()
        #: the client's DeviceClass write count when ``_seen`` was last made from it (None: not
        #: yet, or the client does not count)
        self._generation: Any = None

    def _list(self) -> list[Mapping[str, Any]] | None:
        objects = self._objects() if self._objects is not None else None
        if objects is None or self._unavailable:
            return None
        peek_all = getattr(objects, "peek_all", None)  # the ObjectStore: its stored objects, no copies
        try:
            if peek_all is not None:
                return list(peek_all(DEVICE_CLASS_API_VERSION, _KIND))
            return list(objects.list(DEVICE_CLASS_API_VERSION, _KIND))
        except KeyError:
            # the API server does not serve resource.k8s.io/v1 DeviceClasses: none will appear
            self._unavailable = True
            return None
        except Exception:
            return None  # a transient failure: keep what was seen

    def refresh(self) -> None:
        """Turn the DeviceClass changes since the last refresh into cache events."""
        objects = self._objects() if self._objects is not None else None
        counter = getattr(objects, "kind_generation", None)
        generation = counter(DEVICE_CLASS_API_VERSION, _KIND) if counter is not None else None
        if generation is not None and generation == self._generation:
            return  # no DeviceClass was written since the last refresh
        items = self._list()
        if items is None:
            return
        seen = self._seen
        if not items and not seen:
            self._generation = generation
            return
        current = {}
        for o in items:
            md = o.get("metadata") or {}
            current[_name(o)] = (md.get("uid"), md.get("resourceVersion"), o)
        with self._refresh_lock:
            seen = self._seen
            if current.keys() == seen.keys() and all(current[k][:2] == seen[k][:2] for k in current):
                self._generation = generation
                return
            for name in sorted(seen.keys() - current.keys()):
                self.on_delete(seen[name][2])
            added = []
            for name, (uid, rv, o) in current.items():
                prev = seen.get(name)
                if prev is None:
                    added.append(o)
                elif prev[0] != uid:  # deleted and created again
                    self.on_delete(prev[2])
                    added.append(o)
                elif prev[1] != rv:
                    self.on_update(prev[2], o)
            for o in sorted(added, key=lambda o: (_created(o), _name(o))):
                self.on_add(o)
            self._seen = current
            # the count read before the list: a write during it makes the next refresh list again
            self._generation = generation


_RESOLVERS: weakref.WeakKeyDictionary[Any, DeviceClassResolver] = weakref.WeakKeyDictionary()
_RESOLVERS_LOCK = threading.Lock()


def resolver_for(objects: Any) -> DeviceClassResolver:
    """The DeviceClassResolver of an ObjectClient (one per client, created on first use)."""
    try:
        r = _RESOLVERS.get(objects)
    except TypeError:  # not weak-referenceable: a resolver of its own each time
        return DeviceClassResolver(objects)
    if r is None:
        with _RESOLVERS_LOCK:
            r = _RESOLVERS.get(objects)
            if r is None:
                r = _RESOLVERS[objects] = DeviceClassResolver(objects)
    return r
