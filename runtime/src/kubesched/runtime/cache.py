"""The scheduler's cache: one NodeInfo per node with running totals, assumed pods, and the
snapshot each scheduling cycle sees (kube-scheduler's ``backend/cache``).

The cache is owned by the scheduler's loop thread: events and cycles run there one at a time,
so a cycle's snapshot is the live NodeInfos, updated incrementally, never rebuilt. The order of
nodes follows kube-scheduler's node tree: zones interleaved round-robin.
"""

from __future__ import annotations

from kubesched.sdk import ImageStateSummary, Node, NodeInfo, Pod

from .snapshot import Snapshot

__all__ = ["Cache", "zone_key"]

_ZONE = "topology.kubernetes.io/zone"
_REGION = "topology.kubernetes.io/region"
_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
_REGION_BETA = "failure-domain.beta.kubernetes.io/region"


def zone_key(node: Node) -> str:
    """utilnode.GetZoneKey: region and zone, or "" when neither is set."""
    labels = node.labels
    region = labels.get(_REGION) or labels.get(_REGION_BETA) or ""
    zone = labels.get(_ZONE) or labels.get(_ZONE_BETA) or ""
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class Cache:
    def __init__(self) -> None:
        self._nodes: dict[str, NodeInfo] = {}
        self._zones: dict[str, list[str]] = {}
        self._node_zone: dict[str, str] = {}
        self._pod_node: dict[str, str] = {}
        self._pods: dict[str, Pod] = {}
        self.assumed: dict[str, Pod] = {}
        self._images: dict[str, ImageStateSummary] = {}
        self._snapshot: Snapshot | None = None
        self._order_dirty = True
        # bumped when a node comes or goes or its images change: results that depend on more
        # than one node (ImageLocality's spread) are not reused across it (snapshot.generation)
        self._nodes_epoch = 0

    # nodes --------------------------------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        ni = self._nodes.get(node.name)
        if ni is None:
            ni = NodeInfo()._seal()  # read-only to plugins: the cache writes through _-methods
            self._nodes[node.name] = ni
        if ni.node is None or ni.node.images != node.images:
            self._nodes_epoch += 1
        if ni.node is not None:
            self._remove_images(ni)
        ni._set_node(node)
        self._add_images(ni)
        if self._snapshot is not None:
            self._snapshot.mark_dirty(node.name)
        zk = zone_key(node)
        old_zk = self._node_zone.get(node.name)
        if old_zk != zk:
            if old_zk is not None:
                self._zones[old_zk].remove(node.name)
                if not self._zones[old_zk]:
                    del self._zones[old_zk]
            self._zones.setdefault(zk, []).append(node.name)
            self._node_zone[node.name] = zk
            self._order_dirty = True
        return ni

    def remove_node(self, name: str) -> None:
        ni = self._nodes.get(name)
        if ni is None:
            return
        self._remove_images(ni)
        self._nodes_epoch += 1
        zk = self._node_zone.pop(name, None)
        if zk is not None:
            self._zones[zk].remove(name)
            if not self._zones[zk]:
                del self._zones[zk]
        if ni.pods:
            ni._remove_node()  # keep the pods' accounting until they are deleted
        else:
            del self._nodes[name]
        self._order_dirty = True

    def _add_images(self, ni: NodeInfo) -> None:
        assert ni.node is not None
        states: dict[str, ImageStateSummary] = {}
        for names, size in ni.node.images:
            for n in names:
                st = self._images.get(n)
                if st is None:
                    st = ImageStateSummary(size=size, num_nodes=0)
                    self._images[n] = st
                if n not in states:
                    st._count(1)
                    states[n] = st
        ni._set_image_states(states)

    def _remove_images(self, ni: NodeInfo) -> None:
        for n, st in ni.image_states.items():
            if st._count(-1) <= 0:
                self._images.pop(n, None)
        ni._set_image_states({})

    def node_info(self, name: str) -> NodeInfo | None:
        return self._nodes.get(name)

    def node_count(self) -> int:
        return len(self._node_zone)

    # pods ---------------------------------------------------------------------------------------
    def _place(self, pod: Pod) -> None:
        ni = self._nodes.get(pod.node_name)
        if ni is None:
            ni = NodeInfo()._seal()  # a pod on a node we have not seen yet
            self._nodes[pod.node_name] = ni
        had_aff = bool(ni.pods_with_affinity)
        had_anti = bool(ni.pods_with_required_anti_affinity)
        ni._add_pod(pod)
        self._pods[pod.uid] = pod
        self._pod_node[pod.uid] = pod.node_name
        if self._snapshot is not None:
            self._snapshot.mark_dirty(pod.node_name)
        if self._snapshot is not None and (had_aff != bool(ni.pods_with_affinity) or had_anti != bool(ni.pods_with_required_anti_affinity)):
            self._snapshot.invalidate_affinity_lists()

    def _unplace(self, uid: str) -> Pod | None:
        node = self._pod_node.pop(uid, None)
        pod = self._pods.pop(uid, None)
        if node is None or pod is None:
            return None
        ni = self._nodes.get(node)
        if ni is not None:
            had_aff = bool(ni.pods_with_affinity)
            had_anti = bool(ni.pods_with_required_anti_affinity)
            try:
                ni._remove_pod(pod)
            except KeyError:
                pass
            if ni.node is None and not ni.pods:
                del self._nodes[node]
            if self._snapshot is not None:
                self._snapshot.mark_dirty(node)
            if self._snapshot is not None and (had_aff != bool(ni.pods_with_affinity) or had_anti != bool(ni.pods_with_required_anti_affinity)):
                self._snapshot.invalidate_affinity_lists()
        return pod

    def assume_pod(self, pod: Pod) -> None:
        """Account for ``pod`` (with nodeName set) on its node while it is being bound."""
        if pod.uid in self._pods:
            raise ValueError(f"pod {pod.key} is in the cache, so can't be assumed")
        self._place(pod)
        self.assumed[pod.uid] = pod

    def forget_pod(self, uid: str) -> None:
        if uid in self.assumed:
            self.assumed.pop(uid, None)
            self._unplace(uid)

    def is_assumed(self, uid: str) -> bool:
        return uid in self.assumed

    def add_pod(self, pod: Pod) -> None:
        """An assigned pod from the cluster (confirms an assumed one)."""
        uid = pod.uid
        self.assumed.pop(uid, None)
        if uid in self._pods:
            pod.adopt_requests(self._pods[uid])  # the same requests are not parsed again
            self._unplace(uid)  # replaced by the cluster's object (on its node)
        self._place(pod)

    def remove_pod(self, pod: Pod) -> None:
        self.assumed.pop(pod.uid, None)
        self._unplace(pod.uid)

    def has_pod(self, uid: str) -> bool:
        return uid in self._pods

    def pod(self, uid: str) -> Pod | None:
        return self._pods.get(uid)

    def pod_count(self) -> int:
        return len(self._pods)

    # snapshot -----------------------------------------------------------------------------------
    def _ordered(self) -> list[NodeInfo]:
        """Zones interleaved: the first node of every zone, then the second, ... (nodeTree.list)."""
        zones = list(self._zones.values())
        out: list[NodeInfo] = []
        i = 0
        remaining = True
        while remaining:
            remaining = False
            for names in zones:
                if i < len(names):
                    out.append(self._nodes[names[i]])
                    remaining = True
            i += 1
        return out

    def update_snapshot(self) -> Snapshot:
        """The snapshot for the next cycle; the node list is rebuilt only when nodes come or go."""
        if self._snapshot is None or self._order_dirty:
            self._snapshot = Snapshot(self._ordered())
            self._snapshot._managed = True
            self._order_dirty = False
        self._snapshot.generation = self._nodes_epoch
        return self._snapshot
