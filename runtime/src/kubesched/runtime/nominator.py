"""The pods nominated to nodes (kube-scheduler's ``backend/queue/nominator.go``): a pod that
preempted waits for its victims with its node reserved, and Filter counts it there for pods of
lower or equal priority (``handle.nominated_pods_for_node``)."""

from __future__ import annotations

from collections.abc import Iterable, KeysView

from kubesched.sdk import Pod

__all__ = ["Nominator", "filter_adds"]


def filter_adds(nominated: Iterable[Pod], pod: Pod) -> tuple[Pod, ...]:
    """The nominated pods Filter adds to a node for ``pod`` (addGENominatedPods): those of equal or
    higher priority, ``pod`` itself aside, in the nominator's order."""
    prio, uid = pod.priority, pod.uid
    return tuple([p for p in nominated if p.priority >= prio and p.uid != uid])


class Nominator:
    """Node name -> the pods nominated to it. Owned by the scheduler's loop, as the queue."""

    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}

    def update(self, pod: Pod) -> None:
        """A pod seen by the queue: its ``status.nominatedNodeName`` (if any) is its nomination;
        a nomination this scheduler set stays until the pod is bound or deleted."""
        nn = pod.nominated_node_name
        if nn:
            self.add(pod, nn)

    def add(self, pod: Pod, node_name: str) -> None:
        self.delete(pod)
        self._node_of[pod.uid] = node_name
        self._by_node.setdefault(node_name, {})[pod.uid] = pod

    def delete(self, pod: Pod) -> None:
        node = self._node_of.pop(pod.uid, None)
        if node is not None:
            d = self._by_node.get(node)
            if d is not None:
                d.pop(pod.uid, None)
                if not d:
                    del self._by_node[node]

    def any(self) -> bool:
        return bool(self._by_node)

    def nodes(self) -> KeysView[str]:
        """The names of the nodes some pod is nominated to (a live view)."""
        return self._by_node.keys()

    def pods_for_node(self, node_name: str) -> list[Pod]:
        d = self._by_node.get(node_name)
        return list(d.values()) if d else []
