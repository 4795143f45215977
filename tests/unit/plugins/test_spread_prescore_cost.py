"""PodTopologySpread and InterPodAffinity: PreFilter/PreScore of a pod that does not use them
is skipped without looking at a node, and PreScore over nodes that are not the snapshot's
falls back to the per-node counting (the same state)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kubesched.runtime.plugins.interpodaffinity import InterPodAffinity
from kubesched.runtime.plugins.podtopologyspread import PodTopologySpread
from kubesched.runtime.plugins.podtopologyspread.plugin import PRE_SCORE_STATE_KEY
from kubesched.sdk import Code, CycleState, NodeInfo, Pod
from kubesched.testing import build_plugin, make_handle

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


class Untouchable(Sequence[NodeInfo]):
    """A node list that fails the test when a plugin walks it."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        raise AssertionError("a node was read")

    def __iter__(self) -> Iterator[NodeInfo]:
        raise AssertionError("the nodes were walked")


def nodes(n: int) -> list[dict[str, Any]]:
    return [{"metadata": {"name": f"n{i}", "labels": {HOST: f"n{i}", ZONE: f"z{i % 3}"}}} for i in range(n)]


def test_spread_pre_score_without_constraints_reads_no_node() -> None:
    existing = [{"metadata": {"name": f"e{i}", "uid": f"e{i}", "labels": {"app": "a"}}, "spec": {"nodeName": f"n{i}"}} for i in range(4)]
    handle = make_handle(nodes(30), existing)
    pl = build_plugin(PodTopologySpread, {"defaultingType": "List"}, handle)
    pod = Pod({"metadata": {"name": "p", "uid": "p", "labels": {"app": "a"}}, "spec": {}})
    st = pl.pre_score(CycleState(), pod, Untouchable(30))
    assert st is not None and st.code is Code.SKIP
    st = pl.pre_filter(CycleState(), pod, Untouchable(30))
    assert st is not None and st.code is Code.SKIP


def test_interpodaffinity_pre_score_without_terms_reads_no_node() -> None:
    handle = make_handle(nodes(30), [])
    pl = build_plugin(InterPodAffinity, None, handle)
    pod = Pod({"metadata": {"name": "p", "uid": "p", "labels": {"app": "a"}}, "spec": {}})
    st = pl.pre_score(CycleState(), pod, Untouchable(30))
    assert st is not None and st.code is Code.SKIP


def test_spread_pre_score_over_foreign_nodes_counts_node_by_node() -> None:
    existing = [{"metadata": {"name": f"e{i}", "uid": f"e{i}", "labels": {"app": "a"}}, "spec": {"nodeName": f"n{i % 5}"}} for i in range(9)]
    handle = make_handle(nodes(6), existing)
    pl = build_plugin(PodTopologySpread, None, handle)
    ref = build_plugin(PodTopologySpread, None, handle)
    ref.use_index = False
    pod = Pod({"metadata": {"name": "p", "uid": "p", "labels": {"app": "a"}}, "spec": {"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "a"}}}]}})
    # a node the snapshot does not hold: the index cannot answer, the scan does
    foreign = make_handle(nodes(8), []).snapshot().list()[6:]
    listed = [*handle.snapshot().list()[:3], *foreign]
    a, b = CycleState(), CycleState()
    assert pl.pre_score(a, pod, listed) is None
    assert ref.pre_score(b, pod, listed) is None
    sa, sb = a.read(PRE_SCORE_STATE_KEY), b.read(PRE_SCORE_STATE_KEY)
    assert sa.columns is None
    assert sa.topology_value_to_pod_counts == sb.topology_value_to_pod_counts == [{"z0": 4, "z1": 3, "z2": 2}]
    assert sa.ignored_nodes == sb.ignored_nodes == set()
    assert sa.topology_normalizing_weight == sb.topology_normalizing_weight
