"""NodeInfo: a node and its pods with running totals; sealed (read-only) in the snapshot."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import count
from typing import TYPE_CHECKING, Any, NoReturn

from ..readonly import EMPTY_DICT, ReadOnlyDict, ReadOnlyList
from .node import Node
from .pod import Pod
from .resource import Resource, _set

#: What a write to a NodeInfo of the scheduler's snapshot raises (``TypeError``).
NODE_INFO_READ_ONLY_MESSAGE = (
    "NodeInfo views of the snapshot are read-only; evaluate \"what if\" on node_info.clone(), "
    "write through handle.objects.patch(...)"
)


def _node_info_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(NODE_INFO_READ_ONLY_MESSAGE)


class HostPortInfo:
    """Host ports in use on a node: ip -> {(protocol, port)}; ``0.0.0.0`` conflicts with all.

    The one of a snapshot NodeInfo is read-only (``add``/``remove`` raise); :meth:`clone`
    gives an open copy."""

    __slots__ = ("_m", "_sealed")

    def __init__(self) -> None:
        self._m: dict[str, set[tuple[str, int]]] = {}
        self._sealed = False

    def add(self, ip: str, protocol: str, port: int) -> None:
        if self._sealed:
            _node_info_error()
        self._add(ip, protocol, port)

    def remove(self, ip: str, protocol: str, port: int) -> None:
        if self._sealed:
            _node_info_error()
        self._remove(ip, protocol, port)

    def _add(self, ip: str, protocol: str, port: int) -> None:
        if port <= 0:
            return
        self._m.setdefault(ip or "0.0.0.0", set()).add((protocol or "TCP", port))

    def _remove(self, ip: str, protocol: str, port: int) -> None:
        ip = ip or "0.0.0.0"
        s = self._m.get(ip)
        if s is not None:
            s.discard((protocol or "TCP", port))
            if not s:
                del self._m[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """True when ``ip:protocol/port`` conflicts with a used port (HostPortInfo.CheckConflict)."""
        if port <= 0:
            return False
        ip = ip or "0.0.0.0"
        pp = (protocol or "TCP", port)
        if ip == "0.0.0.0":
            return any(pp in s for s in self._m.values())
        return pp in self._m.get(ip, ()) or pp in self._m.get("0.0.0.0", ())

    def __len__(self) -> int:
        return sum(len(s) for s in self._m.values())

    def clone(self) -> HostPortInfo:
        """An open (mutable) copy."""
        c = HostPortInfo()
        c._m = {k: set(v) for k, v in self._m.items()}
        return c

    def items(self) -> list[tuple[str, str, int]]:
        return [(ip, pr, po) for ip, s in self._m.items() for pr, po in sorted(s)]


class ImageStateSummary:
    """An image on a node: its size and on how many nodes of the cluster it is (read-only;
    the runtime's cache keeps ``num_nodes`` up to date)."""

    __slots__ = ("num_nodes", "size")

    def __init__(self, size: int, num_nodes: int) -> None:
        _set(self, "size", size)
        _set(self, "num_nodes", num_nodes)

    if TYPE_CHECKING:
        size: int
        num_nodes: int
    else:
        __setattr__ = _node_info_error
        __delattr__ = _node_info_error

    def __copy__(self) -> ImageStateSummary:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ImageStateSummary:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (ImageStateSummary, (self.size, self.num_nodes))

    def _count(self, delta: int) -> int:
        """Add ``delta`` to ``num_nodes`` (the runtime's cache) and return the new count."""
        n: int = self.num_nodes + delta
        _set(self, "num_nodes", n)
        return n

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ImageStateSummary):
            return NotImplemented
        return self.size == other.size and self.num_nodes == other.num_nodes

    def __repr__(self) -> str:
        return f"ImageStateSummary(size={self.size}, num_nodes={self.num_nodes})"


_generation = count(1)
_new_node_info = object.__new__
_new_host_port_info = object.__new__


def _clone_resource(r: Resource) -> Resource:
    """``r.clone()`` without the constructor's keyword defaults (a mutable copy)."""
    c = _new_resource(Resource)
    _set(c, "milli_cpu", r.milli_cpu)
    _set(c, "memory", r.memory)
    _set(c, "ephemeral_storage", r.ephemeral_storage)
    _set(c, "allowed_pod_number", r.allowed_pod_number)
    _set(c, "scalar", dict(r.scalar) if r.scalar else {})
    return c


_new_resource = object.__new__


class NodeInfo:
    """A node and the pods on it (bound and assumed), with running totals.

    The runtime keeps one per node and updates the totals incrementally. The NodeInfos a plugin
    gets from the scheduler (its arguments, ``handle.snapshot()``) are sealed: attribute
    assignment, ``add_pod``/``remove_pod``/``set_node``/``remove_node`` and writes to what they
    hold (``pods``, ``requested``, ``used_ports``, ``image_states``, ...) raise ``TypeError``.
    :meth:`clone` gives an open copy on which a plugin evaluates "what if" with ``add_pod``
    and ``remove_pod`` (as preemption does); a NodeInfo built with ``NodeInfo(node, pods)`` is
    open too. Its lists and mappings are read-only either way: change them through the methods.
    """

    __slots__ = (
        "_sealed",
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    if TYPE_CHECKING:
        _sealed: bool
        node: Node
        name: str
        pods: ReadOnlyList[Pod]
        pods_with_affinity: ReadOnlyList[Pod]
        pods_with_required_anti_affinity: ReadOnlyList[Pod]
        used_ports: HostPortInfo
        requested: Resource
        non_zero_requested: Resource
        allocatable: Resource
        image_states: Mapping[str, ImageStateSummary]
        pvc_ref_counts: ReadOnlyDict[str, int]
        generation: int

    def __init__(self, node: Node | None = None, pods: Iterable[Pod] = ()) -> None:
        _set(self, "_sealed", False)
        #: The node. Always set for the NodeInfos a plugin sees (the snapshot holds only
        #: existing nodes); None only inside the runtime's cache for a deleted node whose pods
        #: are still being removed.
        _set(self, "node", None)
        #: the node's name ("" when there is no node)
        _set(self, "name", "")
        _set(self, "pods", ReadOnlyList())
        _set(self, "pods_with_affinity", ReadOnlyList())
        _set(self, "pods_with_required_anti_affinity", ReadOnlyList())
        _set(self, "used_ports", HostPortInfo())
        _set(self, "requested", Resource())
        _set(self, "non_zero_requested", Resource())
        _set(self, "allocatable", Resource())
        _set(self, "image_states", EMPTY_DICT)
        _set(self, "pvc_ref_counts", ReadOnlyDict())
        _set(self, "generation", next(_generation))
        if node is not None:
            self._set_node(node)
        for p in pods:
            self._add_pod(p)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._sealed:
            _node_info_error()
        _set(self, name, value)

    def __delattr__(self, name: str) -> None:
        _node_info_error()

    @property
    def is_sealed(self) -> bool:
        """True for the scheduler's NodeInfos (read-only); False for clones."""
        return self._sealed

    # the public mutators: open NodeInfos only ------------------------------------------------
    def set_node(self, node: Node) -> None:
        if self._sealed:
            _node_info_error()
        self._set_node(node)

    def remove_node(self) -> None:
        if self._sealed:
            _node_info_error()
        self._remove_node()

    def add_pod(self, pod: Pod) -> None:
        if self._sealed:
            _node_info_error()
        self._add_pod(pod)

    def remove_pod(self, pod: Pod) -> None:
        """Remove the pod with ``pod.uid``; raises ``KeyError`` if it is not on this node."""
        if self._sealed:
            _node_info_error()
        self._remove_pod(pod)

    # the runtime's cache (and the methods above) ---------------------------------------------
    def _seal(self) -> NodeInfo:
        """Make this NodeInfo read-only to plugins (the runtime's cache seals its own)."""
        _set(self, "requested", self.requested.read_only())
        _set(self, "non_zero_requested", self.non_zero_requested.read_only())
        _set(self, "allocatable", self.allocatable.read_only())
        _set(self.used_ports, "_sealed", True)
        _set(self, "_sealed", True)
        return self

    def _set_node(self, node: Node) -> None:
        _set(self, "node", node)
        _set(self, "name", node.name)
        _set(self, "allocatable", node.allocatable)
        _set(self, "generation", next(_generation))

    def _remove_node(self) -> None:
        _set(self, "node", None)
        _set(self, "name", "")
        _set(self, "generation", next(_generation))

    def _set_image_states(self, states: Mapping[str, ImageStateSummary]) -> None:
        _set(self, "image_states", ReadOnlyDict(states) if states else EMPTY_DICT)

    def _add_pod(self, pod: Pod) -> None:
        list.append(self.pods, pod)
        if pod.has_pod_affinity:
            list.append(self.pods_with_affinity, pod)
        if pod.has_required_anti_affinity:
            list.append(self.pods_with_required_anti_affinity, pod)
        self._update(pod, 1)

    def _remove_pod(self, pod: Pod) -> None:
        uid = pod.uid
        for lst in (self.pods_with_affinity, self.pods_with_required_anti_affinity):
            if lst:
                for i, p in enumerate(lst):
                    if p.uid == uid:
                        list.__setitem__(lst, i, lst[-1])
                        list.pop(lst)
                        break
        pods = self.pods
        for i, p in enumerate(pods):
            if p.uid == uid:
                list.__setitem__(pods, i, pods[-1])
                list.pop(pods)
                self._update(p, -1)
                return
        raise KeyError(f"no corresponding pod {pod.name} in pods of node {self.name}")

    def _update(self, pod: Pod, sign: int) -> None:
        r = self.requested
        o = pod.node_requests
        _set(r, "milli_cpu", r.milli_cpu + sign * o.milli_cpu)
        _set(r, "memory", r.memory + sign * o.memory)
        _set(r, "ephemeral_storage", r.ephemeral_storage + sign * o.ephemeral_storage)
        if o.scalar:
            sc = r.scalar
            for k, q in o.scalar.items():
                dict.__setitem__(sc, k, sc.get(k, 0) + sign * q)
        cpu, mem = pod.node_non_zero_requests
        nz = self.non_zero_requested
        _set(nz, "milli_cpu", nz.milli_cpu + sign * cpu)
        _set(nz, "memory", nz.memory + sign * mem)
        if pod.host_ports:
            for hp in pod.host_ports:
                if sign > 0:
                    self.used_ports._add(hp.ip, hp.protocol, hp.port)
                else:
                    self.used_ports._remove(hp.ip, hp.protocol, hp.port)
        if pod.volumes:
            for v in pod.volumes:
                pvc = v.get("persistentVolumeClaim")
                if not pvc:
                    continue
                key = f"{pod.namespace}/{pvc.get('claimName')}"
                counts = self.pvc_ref_counts
                n = counts.get(key, 0) + sign
                if n <= 0:
                    dict.pop(counts, key, None)
                else:
                    dict.__setitem__(counts, key, n)
        _set(self, "generation", next(_generation))

    def clone(self) -> NodeInfo:
        """An open copy (``add_pod``/``remove_pod`` work on it); the pods, the node and a
        read-only allocatable (the node's) are shared: they are read-only views, and the
        methods change only the pods, their totals, ports and claims."""
        c = _new_node_info(NodeInfo)
        _set(c, "_sealed", False)
        _set(c, "node", self.node)
        _set(c, "name", self.name)
        _set(c, "pods", ReadOnlyList(self.pods))
        _set(c, "pods_with_affinity", ReadOnlyList(self.pods_with_affinity) if self.pods_with_affinity else ReadOnlyList())
        _set(c, "pods_with_required_anti_affinity",
             ReadOnlyList(self.pods_with_required_anti_affinity) if self.pods_with_required_anti_affinity else ReadOnlyList())
        used = self.used_ports
        if used._m:
            used = used.clone()
        else:
            used = _new_host_port_info(HostPortInfo)
            _set(used, "_m", {})
            _set(used, "_sealed", False)
        _set(c, "used_ports", used)
        _set(c, "requested", _clone_resource(self.requested))
        _set(c, "non_zero_requested", _clone_resource(self.non_zero_requested))
        alloc = self.allocatable
        _set(c, "allocatable", alloc if type(alloc) is not Resource else _clone_resource(alloc))
        _set(c, "image_states", self.image_states)
        _set(c, "pvc_ref_counts", ReadOnlyDict(self.pvc_ref_counts) if self.pvc_ref_counts else ReadOnlyDict())
        _set(c, "generation", self.generation)
        return c

    # copy.copy / copy.deepcopy (CycleState.clone copies values): an open clone; the node and
    # the pods are immutable views, so sharing them makes it a deep copy too
    def __copy__(self) -> NodeInfo:
        return self.clone()

    def __deepcopy__(self, memo: dict[int, Any]) -> NodeInfo:
        return self.clone()

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={[p.key for p in self.pods]})"
