"""NodeResourcesBalancedAllocation, transcribed from kube-scheduler's
``noderesources/balanced_allocation_test.go`` (the v1.34 standard-deviation version; the v1.35
rewrite scores the improvement the pod brings and its expectations differ).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.noderesources import (
    BalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
)
from kubesched.runtime.plugins.noderesources.balanced_allocation import balanced_resource_scorer
from kubesched.runtime.plugins.noderesources.features import ALL_OFF
from kubesched.sdk import MAX_NODE_SCORE, Code, CycleState, Pod, build_args
from kubesched.testing import build_plugin, make_handle, make_pod


def spec_pod(node_name: str, *containers: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": ""},
        "spec": {
            "nodeName": node_name,
            "containers": [
                {"name": f"c{i}", "resources": {"requests": dict(r)}}
                for i, r in enumerate(containers)
            ],
        },
    }


def cpu_and_memory_and_gpu() -> dict[str, Any]:
    return spec_pod(
        "node1",
        {"cpu": "1000m", "memory": "2000"},
        {"cpu": "2000m", "memory": "3000", "nvidia.com/gpu": "3"},
    )


def cpu_only() -> dict[str, Any]:
    return spec_pod("node1", {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


def cpu_and_memory() -> dict[str, Any]:
    return spec_pod("node2", {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


def make_node(
    name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None
) -> dict[str, Any]:
    """test_util.go's makeNode(node, milliCPU, memory, extendedResource)."""
    rl = {k: str(v) for k, v in (extended or {}).items()}
    rl["cpu"] = f"{milli_cpu}m"
    rl["memory"] = str(memory)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": dict(rl), "allocatable": dict(rl)},
    }


DEFAULT_SET = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
WITH_GPU = [*DEFAULT_SET, {"name": "nvidia.com/gpu", "weight": 1}]
SCALAR = {"nvidia.com/gpu": 8}


def _case(
    name, pod, nodes, pods, expected, resources, run_pre_score=True, want_pre_score=Code.SUCCESS
):
    return pytest.param(
        pod,
        nodes,
        pods,
        expected,
        resources,
        run_pre_score,
        want_pre_score,
        id=f"TestNodeResourcesBalancedAllocation/{name}",
    )


CASES = [
    _case(
        "nothing scheduled, nothing requested, skip in PreScore",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": ""}, "spec": {"containers": []}},
        [make_node("node1", 4000, 10000, None), make_node("node2", 4000, 10000, None)],
        [],
        None,
        DEFAULT_SET,
        want_pre_score=Code.SKIP,
    ),
    _case(
        "nothing scheduled, resources requested, differently sized nodes",
        cpu_and_memory(),
        [make_node("node1", 4000, 10000, None), make_node("node2", 6000, 10000, None)],
        [],
        [87, MAX_NODE_SCORE],
        DEFAULT_SET,
    ),
    _case(
        "resources requested, pods scheduled with resources",
        cpu_and_memory(),
        [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 20000, None)],
        [cpu_only(), cpu_and_memory()],
        [82, 95],
        DEFAULT_SET,
    ),
    _case(
        "resources requested, pods scheduled with resources, differently sized nodes",
        cpu_and_memory(),
        [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 50000, None)],
        [cpu_only(), cpu_and_memory()],
        [82, 80],
        DEFAULT_SET,
    ),
    _case(
        "requested resources at node capacity",
        cpu_only(),
        [make_node("node1", 6000, 10000, None), make_node("node2", 6000, 10000, None)],
        [cpu_only(), cpu_and_memory()],
        [50, 75],
        DEFAULT_SET,
    ),
    _case(
        "include scalar resource on a node for balanced resource allocation",
        make_pod().req({"memory": "0", "nvidia.com/gpu": "1"}).obj(),
        [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000, SCALAR)],
        [cpu_and_memory(), cpu_and_memory_and_gpu()],
        [70, 65],
        WITH_GPU,
    ),
    _case(
        "node without the scalar resource should skip the scalar resource",
        cpu_and_memory(),
        [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000, None)],
        [],
        [63, 63],
        WITH_GPU,
    ),
    _case(
        "resources requested, pods scheduled with resources if PreScore not called",
        cpu_and_memory(),
        [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 20000, None)],
        [cpu_only(), cpu_and_memory()],
        [82, 95],
        DEFAULT_SET,
        run_pre_score=False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "pods", "expected", "resources", "run_pre_score", "want_pre_score"), CASES
)
def test_node_resources_balanced_allocation(
    pod, nodes, pods, expected, resources, run_pre_score, want_pre_score
):
    handle = make_handle(nodes, pods)
    p = BalancedAllocation(
        build_args(NodeResourcesBalancedAllocationArgs, {"resources": resources}),
        handle,
        features=ALL_OFF,
    )
    state = CycleState()
    v = Pod(pod)
    if run_pre_score:
        status = p.pre_score(state, v)
        assert (Code.SUCCESS if status is None else status.code) is want_pre_score
        if want_pre_score is Code.SKIP:
            return
    got = [p.score(state, v, handle.snapshot().get(n["metadata"]["name"])) for n in nodes]
    assert got == expected


# beyond the Go tests ---------------------------------------------------------------------------
def test_best_effort_pod_without_pre_score_scores_zero():
    """Score's fallback when PreScore did not run returns 0 for a best-effort pod (as Go)."""
    nodes = [make_node("node1", 4000, 10000, None)]
    handle = make_handle(nodes, [])
    p = build_plugin(BalancedAllocation, None, handle)
    pod = Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c"}]},
        }
    )
    assert p.score(CycleState(), pod, handle.snapshot().get("node1")) == 0


@pytest.mark.parametrize(
    ("requested", "allocatable", "expected"),
    [
        ([3000, 5000], [4000, 10000], 87),  # |0.75 - 0.5| / 2
        ([0, 0], [0, 0], MAX_NODE_SCORE),  # no resource on the node: std 0
        ([5, 1], [4, 4], 62),  # fractions capped at 1: |1 - 0.25| / 2
        ([1, 2, 3], [3, 3, 3], 72),  # population std over three fractions
    ],
)
def test_balanced_resource_scorer(requested, allocatable, expected):
    assert balanced_resource_scorer(requested, allocatable) == expected
