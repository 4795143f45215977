"""DefaultPreemption's dry run over the snapshot's columns (defaultpreemption/rows.py): the
potential nodes read from the statuses as a vector, the lowest pod priority per row kept by
NodeInfo generation. It must give what the pass over the NodeInfos gives: the same candidates,
statuses (in the visiting order) and errors, and follow pods landing on and leaving a node."""

from __future__ import annotations

import random
from typing import Any

import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.plugins.defaultpreemption import NO_VICTIMS_MSG, DefaultPreemption
from kubesched.runtime.plugins.defaultpreemption.rows import NO_PODS, NodeRows, potential_rows
from kubesched.sdk import Code, CycleState, Node, Pod, Status
from kubesched.testing import build_plugin, make_handle

from .test_defaultpreemption import (
    LARGE,
    MID,
    SMALL,
    VERY_LARGE,
    FakeFramework,
    nodes_named,
    pod,
    setup,
)

_STATUSES = [
    Status.unschedulable("Insufficient cpu"),
    Status.unschedulable("Insufficient memory"),
    Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's node affinity/selector"),
]


def _outcome(pl: DefaultPreemption, state: CycleState, preemptor: Pod, m: dict[str, Status]) -> Any:
    nodes = pl.handle.snapshot().list()
    try:
        candidates, statuses = pl.find_candidates(state, nodes, preemptor, m)
    except RuntimeError as e:  # the nodes' errors when there is no candidate
        return str(e)
    return (
        [(c.name, [p.name for p in c.victims], c.num_pdb_violations) for c in candidates],
        [(name, st.code, st.reasons) for name, st in statuses.items()],
    )


@pytest.mark.parametrize("seed", range(40))
def test_rows_path_equals_the_node_info_pass_and_gos_path(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"node{i}" for i in range(rng.randint(1, 12))]
    pods = [
        pod(f"p{i}", node=rng.choice(names), prio=MID + rng.randint(-3, 3), req=rng.choice([SMALL, LARGE]),
            start=float(rng.randint(1, 5)), labels={"app": rng.choice(["db", "web"])})
        for i in range(rng.randint(0, 3 * len(names)))
    ]
    preemptor = pod("p", prio=MID, req=LARGE)
    budgets = rng.choice([[], [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                "metadata": {"name": "b", "namespace": "default"},
                                "spec": {"selector": {"matchLabels": {"app": "db"}}},
                                "status": {"disruptionsAllowed": rng.randint(0, 1)}}]])
    args = {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": rng.randint(1, 4)}
    # each node's status: one of the table's, or absent
    m = {n: st for n in names if (st := rng.choice([*_STATUSES, None])) is not None}
    offset = rng.randint(0, 50)
    got = []
    # the rows; the pass over the NodeInfos; Go's path (every node tried copies it)
    for mode in ("rows", "nodeinfos", "go"):
        pl, _ = setup(nodes_named(names, VERY_LARGE), pods, preemptor, objects=budgets, args=args)
        pl.get_offset_rand = lambda n: offset % n
        if mode == "nodeinfos":
            pl._columns_of = lambda all_nodes: None  # type: ignore[method-assign]
        elif mode == "go":
            pl._skip_nodes_without_victims = False
        got.append(_outcome(pl, CycleState(), Pod(preemptor), m))
        assert (pl._columns_of(pl.handle.snapshot().list()) is not None) is (mode == "rows")
    assert got[0] == got[1] == got[2]


def test_potential_rows_are_the_unschedulable_nodes_in_snapshot_order() -> None:
    h = make_handle(nodes_named(["a", "b", "c", "d", "e"], VERY_LARGE))
    columns = h.snapshot().columns
    m = {"e": _STATUSES[0], "a": _STATUSES[1], "c": _STATUSES[2]}  # b and d absent
    assert [columns.names[r] for r in potential_rows(m, columns).tolist()] == ["a", "e"]
    # a value that is not a status: the caller takes the pass over the NodeInfos
    assert potential_rows({"a": None}, columns) is None  # type: ignore[dict-item]


def _cache_with(names: list[str]) -> Cache:
    cache = Cache()
    for n in nodes_named(names, VERY_LARGE):
        cache.add_node(Node(n))
    return cache


def test_lowest_priority_follows_pods_landing_and_leaving() -> None:
    cache = _cache_with(["node1", "node2"])
    hi = Pod(pod("hi", node="node1", prio=MID, req=SMALL))
    cache.add_pod(hi)
    rows = NodeRows()
    snap = cache.update_snapshot()
    assert snap.columns.names == ["node1", "node2"]
    assert rows.lowest(snap.columns).tolist() == [MID, NO_PODS]
    lo = Pod(pod("lo", node="node1", prio=MID - 1, req=SMALL))
    cache.add_pod(lo)
    assert rows.lowest(cache.update_snapshot().columns).tolist() == [MID - 1, NO_PODS]
    other = Pod(pod("other", node="node2", prio=MID - 7, req=SMALL))
    cache.assume_pod(other)
    assert rows.lowest(cache.update_snapshot().columns).tolist() == [MID - 1, MID - 7]
    cache.remove_pod(lo)
    cache.forget_pod(other.uid)
    assert rows.lowest(cache.update_snapshot().columns).tolist() == [MID, NO_PODS]


def test_dry_run_sees_a_victim_land_and_leave() -> None:
    cache = _cache_with(["node1", "node2"])
    cache.add_pod(Pod(pod("hi", node="node1", prio=MID, req=LARGE)))
    preemptor = pod("p", prio=MID, req=LARGE)
    pl, h = setup([], [], preemptor)
    m = {"node1": _STATUSES[0], "node2": _STATUSES[0]}

    def outcome() -> Any:
        h.set_snapshot(cache.update_snapshot())
        return _outcome(pl, CycleState(), Pod(preemptor), m)

    no_victims = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, [NO_VICTIMS_MSG])
    pl.get_offset_rand = lambda n: 0
    assert outcome() == ([], [("node1", *no_victims), ("node2", *no_victims)])
    lo = Pod(pod("lo", node="node2", prio=MID - 1, req=VERY_LARGE))
    cache.add_pod(lo)
    assert outcome() == ([("node2", ["lo"], 0)], [("node1", *no_victims)])
    cache.remove_pod(lo)
    assert outcome() == ([], [("node1", *no_victims), ("node2", *no_victims)])
    assert pl._rows.columns is h.snapshot().columns  # the rows path ran


def test_rows_path_not_taken_for_a_subclass_dry_run() -> None:
    calls: list[int] = []

    class Counting(DefaultPreemption):
        def dry_run_preemption(self, *a: Any) -> Any:
            calls.append(len(a[2]))
            return super().dry_run_preemption(*a)

    _, h = setup(nodes_named(["node1", "node2"], VERY_LARGE), [pod("lo", node="node1", prio=MID - 1, req=LARGE)])
    h.framework = FakeFramework()
    pl = build_plugin(Counting, None, h)
    preemptor = Pod(pod("p", prio=MID, req=VERY_LARGE))
    candidates, _ = pl.find_candidates(CycleState(), h.snapshot().list(), preemptor,
                                       {"node1": _STATUSES[0], "node2": _STATUSES[0]})
    assert calls == [2] and [c.name for c in candidates] == ["node1"] and pl._rows.columns is None
