"""The standing differential test: kube-scheduler v1.36.3 and kubesched decide on the same state,
pod by pod, and must agree on the feasible nodes, every Score plugin's per-node score, the
totals, the chosen node (where the top total is unique) and the FailedScheduling message; for
pods with ResourceClaims (``dra_scenario``) also the devices of every claim kube-scheduler
allocated.

A few seeded scenarios run here (bounded time); ``bench/differential.py`` runs many and writes
the report. The harness is in ``harness.py``, the generator in ``scenarios.py``.
"""

from __future__ import annotations

from typing import Any

import pytest
from harness import Differential, _comparable_allocation, parse_first_cycle
from scenarios import Scenario, dra_scenario, scenario

#: Seeds run in the suite: ~130 pods, about 20 s.
SUITE_SEEDS = (1, 2, 3, 4, 5, 6)
#: DRA seeds run in the suite (``dra_scenario``).
DRA_SEEDS = (1, 2, 3, 4, 5, 6)


@pytest.mark.parametrize("seed", SUITE_SEEDS)
def test_kube_scheduler_and_kubesched_agree(differential: Any, seed: int) -> None:
    result = differential.run(scenario(seed))
    assert result.pods, "the scenario scheduled no pod"
    assert all(p.kube_feasible or p.kube_message for p in result.pods)
    assert result.differences == [], "\n".join(result.differences)


@pytest.mark.parametrize("seed", DRA_SEEDS)
def test_kube_scheduler_and_kubesched_agree_on_dra(differential: Any, seed: int) -> None:
    """Pods with ResourceClaims: the same feasible nodes, scores (DynamicResources' among them),
    messages, and the same devices in every claim kube-scheduler allocated."""
    result = differential.run(dra_scenario(seed))
    assert result.differences == [], "\n".join(result.differences)
    assert any(p.kube_node for p in result.pods), "no pod was bound"
    assert any(not p.kube_node for p in result.pods), "every pod was bound"


def _node(name: str, cpu: str, memory: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    alloc = {"cpu": cpu, "memory": memory, "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {},
        "status": {"capacity": dict(alloc), "allocatable": alloc, "images": []},
    }


def _pod(name: str, cpu: str, memory: str, *, node: str | None = None, priority: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [{"name": "main", "image": "registry.example/app:1", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        "terminationGracePeriodSeconds": 0,
    }
    if node:
        spec["nodeName"] = node
    if priority:
        spec["priorityClassName"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "diff-example"}, "spec": spec}


def test_the_issue_example_balanced_allocation_scores_the_change(differential: Any) -> None:
    """node-a and node-b, 4 cpu / 8Gi each, run-0 (2 cpu, 1Gi) on node-a, a pending 1 cpu / 1Gi
    pod: kube-scheduler v1.36 scores BalancedAllocation 72 and 71 (v1.34's formula gave 75, 93)."""
    sc = Scenario(
        seed=0,
        namespace="diff-example",
        nodes=[_node("node-a", "4", "8Gi"), _node("node-b", "4", "8Gi")],
        running=[_pod("run-0", "2", "1Gi", node="node-a")],
        pending=[_pod("pending", "1", "1Gi")],
    )
    result = differential.run(sc)
    assert result.differences == [], "\n".join(result.differences)
    (pod,) = result.pods
    assert pod.kube_feasible == ["node-a", "node-b"]
    assert pod.scores["node-a"]["NodeResourcesBalancedAllocation"] == 72
    assert pod.scores["node-b"]["NodeResourcesBalancedAllocation"] == 71


def test_a_preemptor_gets_the_same_message_and_its_node(differential: Any) -> None:
    """A high-priority pod that fits nowhere preempts a low-priority one: the first cycle's
    message (with its preemption part) is the same, and the next pod sees the same state."""
    sc = Scenario(
        seed=0,
        namespace="diff-preempt",
        nodes=[_node("pre-a", "2", "4Gi")],
        running=[_pod("victim", "1500m", "1Gi", node="pre-a", priority="diff-low")],
        pending=[_pod("preemptor", "1", "1Gi", priority="diff-high"), _pod("after", "400m", "1Gi")],
    )
    result = differential.run(sc)
    assert result.differences == [], "\n".join(result.differences)
    preemptor, after = result.pods
    assert preemptor.preempted
    assert preemptor.kube_message.startswith("0/1 nodes are available: 1 Insufficient cpu.")
    assert after.kube_node == "pre-a"


def test_the_harness_sees_a_difference(diff_control_plane: Any, tmp_path: Any) -> None:
    """kubesched run with another weight for ImageLocality: the harness reports the scores and
    totals that differ (the oracle is not blind)."""
    base = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    ours = {
        **base,
        "profiles": [{
            "schedulerName": "default-scheduler",
            "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourcesBalancedAllocation", "weight": 3}]}},
        }],
    }
    d = Differential(diff_control_plane, tmp_path, base, ours_config=ours)
    try:
        sc = Scenario(
            seed=0,
            namespace="diff-blind",
            nodes=[_node("blind-a", "4", "8Gi"), _node("blind-b", "4", "8Gi")],
            running=[_pod("run-0", "2", "1Gi", node="blind-a")],
            pending=[_pod("pending", "1", "1Gi")],
        )
        result = d.run(sc)
    finally:
        d.close()
    assert "NodeResourcesBalancedAllocation on blind-a: kube-scheduler 72, kubesched 216" in result.pods[0].differences
    assert any(x.startswith("total on blind-b:") for x in result.pods[0].differences)


def test_kube_scheduler_log_lines_are_read_per_cycle() -> None:
    lines = [
        'I1124 03:45:12.000001   42 schedule_one.go:107] "About to try and schedule pod" pod="ns/a"',
        'I1124 03:45:12.000002   42 schedule_one.go:992] "Plugin scored node for pod" pod="ns/a" plugin="TaintToleration" node="n1" score=300',
        'I1124 03:45:12.000003   42 schedule_one.go:992] "Plugin scored node for pod" pod="ns/a" plugin="ImageLocality" node="n2" score=0',
        'I1124 03:45:12.000004   42 schedule_one.go:1061] "Calculated node\'s final score for pod" pod="ns/a" node="n1" score=412',
        'I1124 03:45:12.000005   42 schedule_one.go:1239] "Unable to schedule pod; no fit; waiting" pod="ns/a" err="0/2 nodes are available: 2 node(s) didn\'t match Pod\'s node \\"affinity\\"."',
        'I1124 03:45:12.000006   42 schedule_one.go:107] "About to try and schedule pod" pod="ns/a"',
        'I1124 03:45:12.000007   42 schedule_one.go:1061] "Calculated node\'s final score for pod" pod="ns/a" node="n2" score=1',
    ]
    cyc = parse_first_cycle(lines, "ns/a")
    assert cyc.attempted
    assert cyc.scores == {"n1": {"TaintToleration": 300}, "n2": {"ImageLocality": 0}}
    assert cyc.totals == {"n1": 412}  # the retry's line is not the first cycle's
    assert cyc.failed == "0/2 nodes are available: 2 node(s) didn't match Pod's node \"affinity\"."
    assert not parse_first_cycle(lines, "ns/b").attempted


def test_scenarios_are_the_same_for_a_seed() -> None:
    assert scenario(7) == scenario(7)
    assert scenario(7) != scenario(8)
    assert dra_scenario(7) == dra_scenario(7)
    assert dra_scenario(7) != dra_scenario(8)


def test_claim_allocations_are_compared_without_share_id_and_timestamp() -> None:
    """What the harness compares of a claim's allocation: kube-scheduler's as the API server
    returns it, kubesched's in memory (empty fields dropped); shareID and allocationTimestamp
    are not decisions; another device is a difference."""
    selector = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    kube = {
        "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "n1", "device": "g0", "shareID": "7c1b"}]},
        "nodeSelector": selector,
        "allocationTimestamp": "2026-01-01T00:00:00Z",
    }
    ours = {
        "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "n1", "device": "g0", "tolerations": []}], "config": []},
        "nodeSelector": selector,
    }
    assert _comparable_allocation(kube) == _comparable_allocation(ours) == {
        "devices": {"results": [{"request": "gpu", "driver": "d", "pool": "n1", "device": "g0"}]},
        "nodeSelector": selector,
    }
    ours["devices"]["results"][0]["device"] = "g1"
    assert _comparable_allocation(kube) != _comparable_allocation(ours)
    assert _comparable_allocation(None) is None
