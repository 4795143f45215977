"""NodeResourcesBalancedAllocation, transcribed from kube-scheduler v1.36.3's
``noderesources/balanced_allocation_test.go`` (TestNodeResourcesBalancedAllocation: the score is
the change the pod makes to the node's balance, ``50 + (50 + with pod - without pod) / 2``).

Left out: the cases with ``draObjects`` ("include DRA resource on a node for balanced resource
allocation", with and without PreScore; DRAExtendedResource counts devices of ResourceSlices,
which kubesched does not model) and TestBalancedAllocationSignPod (Go's SignPod fragments; kubesched
signs with :func:`resources_signature`).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.noderesources import (
    BalancedAllocation,
    NodeResourcesBalancedAllocationArgs,
)
from kubesched.runtime.plugins.noderesources.balanced_allocation import (
    balanced_pair_scorer,
    balanced_resource_score,
    balanced_resource_scorer,
)
from kubesched.runtime.plugins.noderesources.features import ALL_OFF
from kubesched.sdk import MAX_NODE_SCORE, Code, CycleState, Pod, build_args
from kubesched.testing import build_plugin, make_handle, make_pod


def cpu_only(req: str) -> dict[str, str]:
    return {"cpu": req}


def cpu_and_memory(cpu: str, memory: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory}


def cpu_and_memory_and_gpu(cpu: str, memory: str, gpu: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": memory, "nvidia.com/gpu": gpu}


def gpu(count: int) -> dict[str, int]:
    return {"nvidia.com/gpu": count}


def pod(*containers: dict[str, str], node: str = "") -> dict[str, Any]:
    """st.MakePod().Node(node).Req(c1).Req(c2)...: one container per Req."""
    w = make_pod()
    if node:
        w = w.node(node)
    for c in containers:
        w = w.req(c)
    o = w.obj()
    if not containers:
        o["spec"]["containers"] = []
    return o


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
REQUESTED = pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"))


def existing() -> list[dict[str, Any]]:
    return [
        pod(cpu_only("1000m"), cpu_only("2000m"), node="node1"),
        pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
    ]


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
        pod(),
        [make_node("node1", 4000, 10000, None), make_node("node2", 4000, 10000, None)],
        [],
        None,
        DEFAULT_SET,
        want_pre_score=Code.SKIP,
    ),
    # node1: cpu 0 -> 75%, memory 0 -> 50%: 100 -> 87, score 68
    # node2: cpu 0 -> 50%, memory 0 -> 50%: 100 -> 100, score 75
    _case(
        "nothing scheduled, resources requested, differently sized nodes",
        REQUESTED,
        [make_node("node1", 4000, 10000, None), make_node("node2", 6000, 10000, None)],
        [],
        [68, 75],
        DEFAULT_SET,
    ),
    # node1: cpu 30% -> 60%, memory 0 -> 25%: 85 -> 82, score 73
    # node2: cpu 30% -> 60%, memory 25% -> 50%: 97 -> 95, score 74
    _case(
        "resources requested, pods scheduled with resources",
        REQUESTED,
        [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 20000, None)],
        existing(),
        [73, 74],
        DEFAULT_SET,
    ),
    # node2: cpu 30% -> 60%, memory 10% -> 20%: 90 -> 80, score 70
    _case(
        "resources requested, pods scheduled with resources, differently sized nodes",
        REQUESTED,
        [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 50000, None)],
        existing(),
        [73, 70],
        DEFAULT_SET,
    ),
    # node1: cpu 100% -> 100%, memory 0 -> 100%: 50 -> 100, score 100
    # node2: cpu 0 -> 0, memory 0 -> 100%: 100 -> 50, score 50
    _case(
        "resources requested, pods scheduled with resources, nodes to reach min/max score",
        pod({"memory": "2000"}, {"memory": "3000"}),
        [make_node("node1", 3000, 5000, None), make_node("node2", 3000, 5000, None)],
        [pod(cpu_only("1000m"), cpu_only("2000m"), node="node1")],
        [100, 50],
        DEFAULT_SET,
    ),
    # node1: cpu 50% -> 100%, memory 0 -> 0: 75 -> 50, score 62
    # node2: cpu 50% -> 100%, memory 50% -> 50%: 100 -> 75, score 62
    _case(
        "requested resources at node capacity",
        pod(cpu_only("1000m"), cpu_only("2000m")),
        [make_node("node1", 6000, 10000, None), make_node("node2", 6000, 10000, None)],
        existing(),
        [62, 62],
        DEFAULT_SET,
    ),
    # node1: cpu 85.7%, memory 12.5%, gpu 37.5% -> 50%: 69 -> 70, score 75
    # node2: cpu 85.7%, memory 12.5%, gpu 0 -> 12.5%: 62 -> 65, score 76
    _case(
        "scalar resource is included in the score computation if pod requests the scalar resource",
        pod(cpu_and_memory_and_gpu("0", "0", "1")),
        [make_node("node1", 3500, 40000, gpu(8)), make_node("node2", 3500, 40000, gpu(8))],
        [
            pod(
                cpu_and_memory("1000m", "2000"),
                cpu_and_memory_and_gpu("2000m", "3000", "3"),
                node="node1",
            ),
            pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
        ],
        [75, 76],
        WITH_GPU,
    ),
    # gpu not requested by the pod: left out; cpu 0 -> 85.7%, memory 0 -> 12.5%: 100 -> 63, 56
    _case(
        "scalar resource is not included in the score computation if pod doesn't request the scalar resource",
        REQUESTED,
        [make_node("node1", 3500, 40000, gpu(8)), make_node("node2", 3500, 40000, None)],
        [],
        [56, 56],
        WITH_GPU,
    ),
    _case(
        "resources requested, pods scheduled with resources if PreScore not called",
        REQUESTED,
        [make_node("node1", 10000, 20000, None), make_node("node2", 10000, 20000, None)],
        existing(),
        [73, 74],
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
def test_balanced_resource_score(requested, allocatable, expected):
    """balancedResourceScore: the balance of one state of the node."""
    assert balanced_resource_score(requested, allocatable) == expected


@pytest.mark.parametrize(
    ("requested", "allocated", "allocatable", "expected"),
    [
        ([3000, 5000], [0, 0], [4000, 10000], 68),  # 50 + (50 + 87 - 100) / 2 = 50 + 37 / 2
        ([3000, 5000], [3000, 0], [4000, 10000], 87),  # 62 -> 87: 50 + 75 / 2
        ([0, 0], [0, 0], [0, 0], 75),  # nothing on the node: 100 -> 100
        ([1, 1, 1], [1, 1, 1], [1, 1, 1], 75),  # no change
        ([4, 4], [0, 4], [4, 4], 100),  # 50 -> 100, the most improvement
        ([0, 4], [0, 0], [4, 4], 50),  # 100 -> 50, the most harm
    ],
)
def test_balanced_resource_scorer(requested, allocated, allocatable, expected):
    """balancedResourceScorer (v1.36): the change the pod makes to the balance, truncated."""
    assert balanced_resource_scorer(requested, allocated, allocatable) == expected
    if len(requested) == 2:
        # the (cpu, memory) form the hot path calls gives the same
        args = (*requested, *allocated, *allocatable)
        assert balanced_pair_scorer(*args) == expected


def test_balanced_resource_scorer_truncates_toward_zero():
    """Go's int64 division truncates toward zero: 50 + (50 + 49 - 100) / 2 is 50 + 0, not 49
    (Python's ``//`` would floor -1/2 to -1). A balance of 49 happens when float rounding puts the
    standard deviation a hair above 0.5."""
    from kubesched.runtime.plugins.noderesources.balanced_allocation import _improvement

    assert _improvement(49, 100) == 50
    assert _improvement(50, 100) == 50
    assert _improvement(100, 50) == 100


def test_issue_12_side_by_side_case():
    """The side-by-side run of issue 12: node-a and node-b with 4 cpu / 8Gi each, run-0 (2 cpu,
    1Gi) on node-a, a pending pod of 1 cpu / 1Gi. kube-scheduler v1.36.3 logs BalancedAllocation
    72 (node-a: 81 -> 75) and 71 (node-b: 100 -> 93); the v1.34 formula gave 75 and 93."""
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": n},
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
        for n in ("node-a", "node-b")
    ]
    run0 = make_pod().name("run-0").node("node-a").req({"cpu": "2", "memory": "1Gi"}).obj()
    handle = make_handle(nodes, [run0])
    p = build_plugin(BalancedAllocation, None, handle)  # the default args and features
    pending = Pod(make_pod().name("pending").req({"cpu": "1", "memory": "1Gi"}).obj())
    state = CycleState()
    assert p.pre_score(state, pending) is None
    infos = [handle.snapshot().get(n) for n in ("node-a", "node-b")]
    assert [p.score(state, pending, ni) for ni in infos] == [72, 71]
    assert p.score_batch(state, pending, infos) == [72, 71]
    # and without PreScore (Score computes the requests itself)
    assert [p.score(CycleState(), pending, ni) for ni in infos] == [72, 71]


def test_batch_form_matches_per_node_form_with_more_resources():
    """score_batch on the general path (three resources) gives what score gives (the Go case
    "scalar resource is included in the score computation if pod requests the scalar resource")."""
    nodes = [make_node("node1", 3500, 40000, gpu(8)), make_node("node2", 3500, 40000, gpu(8))]
    pods = [
        pod(cpu_and_memory("1000m", "2000"), cpu_and_memory_and_gpu("2000m", "3000", "3"), node="node1"),
        pod(cpu_and_memory("1000m", "2000"), cpu_and_memory("2000m", "3000"), node="node2"),
    ]
    handle = make_handle(nodes, pods)
    p = BalancedAllocation(
        build_args(NodeResourcesBalancedAllocationArgs, {"resources": WITH_GPU}), handle, features=ALL_OFF
    )
    v = Pod(pod(cpu_and_memory_and_gpu("0", "0", "1")))
    state = CycleState()
    assert p.pre_score(state, v) is None
    infos = [handle.snapshot().get(n) for n in ("node1", "node2")]
    assert p.score_batch(state, v, infos) == [p.score(state, v, ni) for ni in infos] == [75, 76]


def test_sign_pod_covers_pod_level_status_resources():
    """The pod's requests now read ``status.resources`` / ``status.allocatedResources`` for its
    pod-level requests (InPlacePodLevelResourcesVerticalScaling), so two pods that differ only
    there sign differently; identical pods sign alike."""
    p = build_plugin(BalancedAllocation, None, make_handle([], []))
    base = make_pod().name("p").req({"cpu": "500m"}).obj()
    base["spec"]["resources"] = {"requests": {"cpu": "1"}}
    resized = make_pod().name("p").req({"cpu": "500m"}).obj()
    resized["spec"]["resources"] = {"requests": {"cpu": "1"}}
    resized["status"]["resources"] = {"requests": {"cpu": "2"}}
    allocated = make_pod().name("p").req({"cpu": "500m"}).obj()
    allocated["spec"]["resources"] = {"requests": {"cpu": "1"}}
    allocated["status"]["allocatedResources"] = {"cpu": "2"}
    signs = [p.sign_pod(Pod(o)) for o in (base, resized, allocated)]
    assert len(set(signs)) == 3
    assert p.sign_pod(Pod(base)) == signs[0]
