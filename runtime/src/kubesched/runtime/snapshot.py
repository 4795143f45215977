"""The node snapshot a scheduling cycle sees (kube-scheduler's Snapshot / SharedLister)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.sdk import ImageStateSummary, Node, NodeColumns, NodeInfo, Pod

__all__ = ["Snapshot", "update_image_states"]


def update_image_states(node_infos: Iterable[NodeInfo]) -> None:
    """Fill ``image_states`` (size and number of nodes having each image) for a set of nodes."""
    infos = list(node_infos)
    counts: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for ni in infos:
        if ni.node is None:
            continue
        seen = set()
        for names, size in ni.node.images:
            for n in names:
                if n in seen:
                    continue
                seen.add(n)
                counts[n] = counts.get(n, 0) + 1
                sizes[n] = size
    for ni in infos:
        if ni.node is None:
            continue
        states = {}
        for names, _size in ni.node.images:
            for n in names:
                states[n] = ImageStateSummary(size=sizes[n], num_nodes=counts[n])
        ni._set_image_states(states)


class Snapshot:
    """An ordered set of NodeInfos with the two affinity sublists kube-scheduler keeps."""

    __slots__ = ("_affinity", "_anti_affinity", "_by_name", "_columns", "_dirty", "_list", "_managed", "generation")

    def __init__(self, node_infos: Iterable[NodeInfo] = ()) -> None:
        self._list: list[NodeInfo] = [ni for ni in node_infos if ni.node is not None]
        self._by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self._list}
        self._affinity: list[NodeInfo] | None = None
        self._anti_affinity: list[NodeInfo] | None = None
        self.generation = 0
        self._columns: NodeColumns | None = None
        #: names of nodes whose NodeInfo changed since the columns were last refreshed (kept
        #: by the cache that owns this snapshot, ``_managed``)
        self._dirty: set[str] = set()
        self._managed = False

    @classmethod
    def from_objects(
        cls, nodes: Iterable[Mapping[str, Any] | Node], pods: Iterable[Mapping[str, Any] | Pod] = ()
    ) -> Snapshot:
        """Nodes and pods as API dicts (or views); pods with ``spec.nodeName`` are placed on
        their node, as the scheduler's cache would have them."""
        infos: dict[str, NodeInfo] = {}
        for n in nodes:
            node = n if isinstance(n, Node) else Node(n)
            infos[node.name] = NodeInfo(node)
        for p in pods:
            pod = p if isinstance(p, Pod) else Pod(p)
            if pod.node_name and pod.node_name in infos:
                infos[pod.node_name].add_pod(pod)
        update_image_states(infos.values())
        for ni in infos.values():
            ni._seal()  # read-only to plugins, as the cache's NodeInfos are
        return cls(infos.values())

    def list(self) -> Sequence[NodeInfo]:
        return self._list

    def get(self, node_name: str) -> NodeInfo:
        try:
            return self._by_name[node_name]
        except KeyError:
            raise KeyError(f"nodeinfo not found for node name {node_name!r}") from None

    def have_pods_with_affinity_list(self) -> Sequence[NodeInfo]:
        if self._affinity is None:
            self._affinity = [ni for ni in self._list if ni.pods_with_affinity]
        return self._affinity

    def have_pods_with_required_anti_affinity_list(self) -> Sequence[NodeInfo]:
        if self._anti_affinity is None:
            self._anti_affinity = [ni for ni in self._list if ni.pods_with_required_anti_affinity]
        return self._anti_affinity

    def invalidate_affinity_lists(self) -> None:
        self._affinity = None
        self._anti_affinity = None

    @property
    def columns(self) -> NodeColumns:
        """The nodes as columns (row ``i`` is ``list()[i]``), up to date with the NodeInfos."""
        c = self._columns
        if c is None:
            c = self._columns = NodeColumns(self._list)
            self._dirty.clear()
        elif self._managed:
            if self._dirty:
                index = c.index
                c.refresh([index[n] for n in self._dirty if n in index])
                self._dirty.clear()
        else:
            c.refresh()
        return c

    def mark_dirty(self, name: str) -> None:
        """The NodeInfo of ``name`` changed (the owning cache calls it)."""
        if self._columns is not None:
            self._dirty.add(name)

    def __len__(self) -> int:
        return len(self._list)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name
