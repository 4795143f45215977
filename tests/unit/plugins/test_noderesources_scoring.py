"""NodeResourcesFit's scoring strategies and the shared scorer, transcribed from kube-scheduler's
``noderesources/least_allocated_test.go``, ``most_allocated_test.go``,
``requested_to_capacity_ratio_test.go`` and ``resource_allocation_test.go``.

As in Go, the args are built without the v1 defaulting (``NewFit`` gets the internal config), so a
weight of 0 or an empty resource list reaches validation / scoring as written. The v1.36 tables;
cases that need DRA objects (DRAExtendedResource: DeviceClasses, ResourceSlices, ResourceClaims,
which kubesched does not model) are left out, and so are the device/node match cache tests of
``resource_allocation_test.go`` (the DRA code's caches).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.noderesources import (
    Fit,
    NodeResourcesFitArgs,
    RequestedToCapacityRatioParam,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
)
from kubesched.runtime.plugins.noderesources.features import ALL_OFF
from kubesched.runtime.plugins.noderesources.least_allocated import least_resource_scorer
from kubesched.runtime.plugins.noderesources.resource_allocation import ResourceAllocationScorer
from kubesched.runtime.plugins.noderesources.shape import (
    FunctionShapePoint,
    build_broken_linear_function,
)
from kubesched.sdk import Code, CycleState, Node, NodeInfo, Pod
from kubesched.testing import make_handle, make_node, make_pod

MAX = 100
MIN = 0
EXTENDED_RES = "abc.com/xyz"
DEFAULT_RESOURCES = [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]
EXTENDED_RESOURCE_SET = [
    ResourceSpec("cpu", 1),
    ResourceSpec("memory", 1),
    ResourceSpec(EXTENDED_RES, 1),
]


def fit_args(
    type_: str, resources: list[ResourceSpec] | None, shape: list[tuple[int, int]] | None = None
) -> NodeResourcesFitArgs:
    """config.NodeResourcesFitArgs as Go's tests write it: no defaulting."""
    args = NodeResourcesFitArgs()
    args.scoring_strategy = ScoringStrategy(
        type=type_,
        resources=[ResourceSpec(r.name, r.weight) for r in resources or []],
        requested_to_capacity_ratio=None
        if shape is None
        else RequestedToCapacityRatioParam([UtilizationShapePoint(u, s) for u, s in shape]),
    )
    return args


def bare(w: Any) -> dict[str, Any]:
    """st.MakePod() without containers (the Python builder adds one)."""
    o = w.obj()
    o["spec"]["containers"] = []
    return o


def node(name: str, **capacity: str) -> dict[str, Any]:
    return make_node().name(name).capacity(capacity).obj()


def node_rl(name: str, rl: dict[str, str]) -> dict[str, Any]:
    return make_node().name(name).capacity(rl).obj()


def make_node_ext(
    name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None
) -> dict[str, Any]:
    """test_util.go's makeNode(node, milliCPU, memory, extendedResource): capacity = allocatable."""
    rl = {k: str(v) for k, v in (extended or {}).items()}
    rl["cpu"] = f"{milli_cpu}m"
    rl["memory"] = str(memory)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": dict(rl), "allocatable": dict(rl)},
    }


def run_scores(
    args: NodeResourcesFitArgs,
    pod: dict[str, Any],
    nodes: list[dict[str, Any]],
    existing: list[dict[str, Any]],
    pre_score_per_node: bool = False,
) -> tuple[list[int], list[Code]]:
    handle = make_handle(nodes, existing)
    p = Fit(args, handle, features=ALL_OFF)
    state = CycleState()
    v = Pod(pod)
    if not pre_score_per_node:
        assert p.pre_score(state, v) is None
    scores, codes = [], []
    for n in nodes:
        if pre_score_per_node:
            assert p.pre_score(state, v) is None
        out = p.score(state, v, handle.snapshot().get(n["metadata"]["name"]))
        if isinstance(out, tuple):
            scores.append(out[0])
            codes.append(out[1].code)
        else:
            scores.append(out)
            codes.append(Code.SUCCESS)
    return scores, codes


def two_containers() -> Any:
    return make_pod().req(cpu="1000", memory="2000").req(cpu="2000", memory="3000")


# TestLeastAllocatedScoringStrategy ------------------------------------------------------------
def _least(name, pod, nodes, existing, expected, resources, want_err=None, want_code=Code.SUCCESS):
    return pytest.param(
        pod,
        nodes,
        existing,
        expected,
        resources,
        want_err,
        want_code,
        id=f"TestLeastAllocatedScoringStrategy/{name}",
    )


LEAST = [
    _least(
        "nothing scheduled, nothing requested",
        bare(make_pod()),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="4000", memory="10000")],
        [],
        [MAX, MAX],
        DEFAULT_RESOURCES,
    ),
    _least(
        "nothing scheduled, resources requested, differently sized nodes",
        two_containers().obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
        [],
        [37, 50],
        DEFAULT_RESOURCES,
    ),
    _least(
        "Resources not set, pods scheduled with error",
        two_containers().obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
        [],
        [MIN, MIN],
        None,
        want_code=Code.ERROR,
    ),
    _least(
        "no resources requested, pods scheduled",
        bare(make_pod()),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="4000", memory="10000")],
        [
            bare(make_pod().node("node1")),
            bare(make_pod().node("node1")),
            bare(make_pod().node("node2")),
            bare(make_pod().node("node2")),
        ],
        [MAX, MAX],
        DEFAULT_RESOURCES,
    ),
    _least(
        "no resources requested, pods scheduled with resources",
        bare(make_pod()),
        [node("node1", cpu="10000", memory="20000"), node("node2", cpu="10000", memory="20000")],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [70, 57],
        DEFAULT_RESOURCES,
    ),
    _least(
        "resources requested, pods scheduled with resources",
        two_containers().obj(),
        [node("node1", cpu="10000", memory="20000"), node("node2", cpu="10000", memory="20000")],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [57, 45],
        DEFAULT_RESOURCES,
    ),
    _least(
        "resources requested, pods scheduled with resources, differently sized nodes",
        two_containers().obj(),
        [node("node1", cpu="10000", memory="20000"), node("node2", cpu="10000", memory="50000")],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [57, 60],
        DEFAULT_RESOURCES,
    ),
    _least(
        "requested resources exceed node capacity",
        make_pod().req(cpu="3000", memory="0").obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="4000", memory="10000")],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [50, 25],
        DEFAULT_RESOURCES,
    ),
    _least(
        "zero node resources, pods scheduled with resources",
        bare(make_pod()),
        [make_node().name("node1").obj(), make_node().name("node2").obj()],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [MIN, MIN],
        DEFAULT_RESOURCES,
    ),
    _least(
        "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
        two_containers().node("node1").obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
        [],
        [41, 50],
        [ResourceSpec("memory", 2), ResourceSpec("cpu", 1)],
    ),
    _least(
        "resource with negative weight",
        two_containers().node("node1").obj(),
        [node("node1", cpu="4000", memory="10000")],
        [],
        None,
        [ResourceSpec("memory", -1), ResourceSpec("cpu", 1)],
        want_err="scoringStrategy.resources[0].weight: Invalid value",
    ),
    _least(
        "resource with zero weight",
        two_containers().node("node1").obj(),
        [node("node1", cpu="4000", memory="10000")],
        [],
        None,
        [ResourceSpec("memory", 1), ResourceSpec("cpu", 0)],
        want_err="scoringStrategy.resources[1].weight: Invalid value",
    ),
    _least(
        "resource weight larger than MaxNodeScore",
        two_containers().node("node1").obj(),
        [node("node1", cpu="4000", memory="10000")],
        [],
        None,
        [ResourceSpec("memory", 1), ResourceSpec("cpu", 101)],
        want_err="scoringStrategy.resources[1].weight: Invalid value",
    ),
    _least(
        "bypass extended resource if the pod does not request",
        two_containers().node("node1").obj(),
        [
            node("node1", cpu="6000", memory="10000"),
            node_rl("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        [50, 50],
        EXTENDED_RESOURCE_SET,
    ),
    _least(
        "honor extended resource if the pod requests",
        make_pod().node("node1").req({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}).obj(),
        [
            node_rl("node1", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
            node_rl("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "10"}),
        ],
        [],
        [50, 60],
        EXTENDED_RESOURCE_SET,
    ),
    _least(
        "if the node doesn't have a resource",
        make_pod().node("node1").req(cpu="3000", memory="4000").obj(),
        [
            node("node1", cpu="6000", memory="10000"),
            node_rl("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        [55, 55],
        [ResourceSpec(EXTENDED_RES, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "expected", "resources", "want_err", "want_code"), LEAST
)
def test_least_allocated_scoring_strategy(
    pod, nodes, existing, expected, resources, want_err, want_code
):
    args = fit_args("LeastAllocated", resources)
    if want_err:
        with pytest.raises(
            ValueError, match=r"^" + want_err.replace("[", r"\[").replace("]", r"\]")
        ):
            Fit(args, make_handle(nodes, existing), features=ALL_OFF)
        return
    scores, codes = run_scores(args, pod, nodes, existing)
    assert scores == expected
    assert codes == [want_code] * len(nodes)


# TestMostAllocatedScoringStrategy -------------------------------------------------------------
def _most(name, pod, nodes, existing, expected, resources, want_err=None, want_code=Code.SUCCESS):
    return pytest.param(
        pod,
        nodes,
        existing,
        expected,
        resources,
        want_err,
        want_code,
        id=f"TestMostAllocatedScoringStrategy/{name}",
    )


MOST = [
    _most(
        "nothing scheduled, nothing requested",
        bare(make_pod()),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="4000", memory="10000")],
        [],
        [MIN, MIN],
        DEFAULT_RESOURCES,
    ),
    _most(
        "nothing scheduled, resources requested, differently sized nodes",
        two_containers().obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
        [],
        [62, 50],
        DEFAULT_RESOURCES,
    ),
    _most(
        "Resources not set, pods scheduled with error",
        two_containers().obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
        [],
        [MIN, MIN],
        None,
        want_code=Code.ERROR,
    ),
    _most(
        "no resources requested, pods scheduled with resources",
        bare(make_pod()),
        [node("node1", cpu="10000", memory="20000"), node("node2", cpu="10000", memory="20000")],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [30, 42],
        DEFAULT_RESOURCES,
    ),
    _most(
        "resources requested, pods scheduled with resources",
        two_containers().obj(),
        [node("node1", cpu="10000", memory="20000"), node("node2", cpu="10000", memory="20000")],
        [
            make_pod().node("node1").req(cpu="3000", memory="0").obj(),
            make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
        ],
        [42, 55],
        DEFAULT_RESOURCES,
    ),
    _most(
        "resources requested equal node capacity",
        make_pod().req(cpu="2000", memory="4000").req(cpu="3000", memory="5000").obj(),
        [node("node1", cpu="5000", memory="10000"), node("node2", cpu="10000", memory="9000")],
        [],
        [95, 75],
        DEFAULT_RESOURCES,
    ),
    _most(
        # Go names this case like an earlier one; `go test` reports it with a "#01" suffix
        "nothing scheduled, resources requested, differently sized nodes#01",
        two_containers().obj(),
        [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
        [],
        [58, 50],
        [ResourceSpec("memory", 2), ResourceSpec("cpu", 1)],
    ),
    _most(
        "no resources requested, pods scheduled, nonzero request for resource",
        make_pod().container(name="container").obj(),
        [node("node1", cpu="250m", memory="1000Mi"), node("node2", cpu="250m", memory="1000Mi")],
        [
            make_pod().node("node1").container(name="container").obj(),
            make_pod().node("node1").container(name="container").obj(),
        ],
        [80, 30],
        DEFAULT_RESOURCES,
    ),
    _most(
        "resource with negative weight",
        two_containers().obj(),
        [node("node2", cpu="4000", memory="10000")],
        [],
        None,
        [ResourceSpec("memory", -1), ResourceSpec("cpu", 1)],
        want_err="scoringStrategy.resources[0].weight: Invalid value",
    ),
    _most(
        "resource with zero weight",
        two_containers().obj(),
        [node("node2", cpu="4000", memory="10000")],
        [],
        None,
        [ResourceSpec("memory", 1), ResourceSpec("cpu", 0)],
        want_err="scoringStrategy.resources[1].weight: Invalid value",
    ),
    _most(
        "resource weight larger than MaxNodeScore",
        two_containers().obj(),
        [node("node2", cpu="4000", memory="10000")],
        [],
        None,
        [ResourceSpec("memory", 101)],
        want_err="scoringStrategy.resources[0].weight: Invalid value",
    ),
    _most(
        "bypass extended resource if the pod does not request",
        two_containers().obj(),
        [
            node("node1", cpu="6000", memory="10000"),
            node_rl("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        [50, 50],
        EXTENDED_RESOURCE_SET,
    ),
    _most(
        "honor extended resource if the pod request",
        make_pod().node("node1").req({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}).obj(),
        [
            node_rl("node1", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
            node_rl("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "10"}),
        ],
        [],
        [50, 40],
        EXTENDED_RESOURCE_SET,
    ),
    _most(
        "if the node doesn't have a resource",
        make_pod().node("node1").req(cpu="3000", memory="4000").obj(),
        [
            node("node1", cpu="6000", memory="10000"),
            node_rl("node2", {"cpu": "6000", "memory": "10000", EXTENDED_RES: "4"}),
        ],
        [],
        [45, 45],
        [ResourceSpec(EXTENDED_RES, 2), ResourceSpec("cpu", 1), ResourceSpec("memory", 1)],
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "expected", "resources", "want_err", "want_code"), MOST
)
def test_most_allocated_scoring_strategy(
    pod, nodes, existing, expected, resources, want_err, want_code
):
    args = fit_args("MostAllocated", resources)
    if want_err:
        with pytest.raises(
            ValueError, match=r"^" + want_err.replace("[", r"\[").replace("]", r"\]")
        ):
            Fit(args, make_handle(nodes, existing), features=ALL_OFF)
        return
    scores, codes = run_scores(args, pod, nodes, existing)
    assert scores == expected
    assert codes == [want_code] * len(nodes)


# TestRequestedToCapacityRatioScoringStrategy --------------------------------------------------
SHAPE = [(0, 10), (100, 0)]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "expected"),
    [
        pytest.param(
            bare(make_pod()),
            [node("node1", cpu="4000", memory="10000"), node("node2", cpu="4000", memory="10000")],
            [bare(make_pod().node("node1")), bare(make_pod().node("node1"))],
            [MAX, MAX],
            id="TestRequestedToCapacityRatioScoringStrategy/nothing scheduled, nothing requested (default - least requested nodes have priority)",
        ),
        pytest.param(
            two_containers().obj(),
            [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
            [bare(make_pod().node("node1")), bare(make_pod().node("node1"))],
            [38, 50],
            id="TestRequestedToCapacityRatioScoringStrategy/nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
        ),
        pytest.param(
            bare(make_pod()),
            [node("node1", cpu="4000", memory="10000"), node("node2", cpu="6000", memory="10000")],
            [
                make_pod().node("node1").req(cpu="3000", memory="5000").obj(),
                make_pod().node("node2").req(cpu="3000", memory="5000").obj(),
            ],
            [38, 50],
            id="TestRequestedToCapacityRatioScoringStrategy/no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
        ),
    ],
)
def test_requested_to_capacity_ratio_scoring_strategy(pod, nodes, existing, expected):
    scores, codes = run_scores(
        fit_args("RequestedToCapacityRatio", DEFAULT_RESOURCES, SHAPE), pod, nodes, existing, True
    )
    assert scores == expected
    assert codes == [Code.SUCCESS] * len(nodes)


# TestBrokenLinearFunction ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("points", "assertions"),
    [
        pytest.param(
            [(10, 1), (90, 9)],
            [
                (-10, 1),
                (0, 1),
                (9, 1),
                (10, 1),
                (15, 1),
                (19, 1),
                (20, 2),
                (89, 8),
                (90, 9),
                (99, 9),
                (100, 9),
                (110, 9),
            ],
            id="TestBrokenLinearFunction/case_0",
        ),
        pytest.param(
            [(0, 2), (40, 10), (100, 0)],
            [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)],
            id="TestBrokenLinearFunction/case_1",
        ),
        pytest.param(
            [(0, 2), (40, 2), (100, 2)],
            [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)],
            id="TestBrokenLinearFunction/case_2",
        ),
    ],
)
def test_broken_linear_function(points, assertions):
    f = build_broken_linear_function([FunctionShapePoint(u, s) for u, s in points])
    for p, expected in assertions:
        assert abs(f(p) - expected) <= 0.1, (points, p)


def test_broken_linear_function_truncates_toward_zero():
    """Go's int64 division truncates: a decreasing segment rounds up, not down."""
    f = build_broken_linear_function([FunctionShapePoint(0, 100), FunctionShapePoint(100, 0)])
    # 100 + (0 - 100) * 33 / 100 = 100 - 33 = 67 exactly; 100 + (-100 * 1) / 3 -> 100 - 33 (not 34)
    assert f(33) == 67
    g = build_broken_linear_function([FunctionShapePoint(0, 10), FunctionShapePoint(3, 0)])
    assert g(1) == 10 + int(-10 * 1 / 3)  # == 7


# TestResourceBinPackingSingleExtended ---------------------------------------------------------
EXT1 = {"intel.com/foo": 4}
EXT2 = {"intel.com/foo": 8}
EXT3 = {"intel.com/foo": "2"}
EXT4 = {"intel.com/foo": "4"}
_SINGLE_NODES = [
    make_node_ext("node1", 4000, 10000 * 1024 * 1024, EXT2),
    make_node_ext("node2", 4000, 10000 * 1024 * 1024, EXT1),
]


@pytest.mark.parametrize(
    ("pod", "pods", "expected"),
    [
        pytest.param(
            bare(make_pod()),
            [],
            [0, 0],
            id="TestResourceBinPackingSingleExtended/nothing scheduled, nothing requested",
        ),
        pytest.param(
            make_pod().req(EXT3).obj(),
            [bare(make_pod())],
            [2, 5],
            id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            make_pod().req(EXT3).obj(),
            [make_pod().req(EXT3).node("node2").obj()],
            [2, 10],
            id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            make_pod().req(EXT4).obj(),
            [bare(make_pod())],
            [5, 10],
            id="TestResourceBinPackingSingleExtended/resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_single_extended(pod, pods, expected):
    args = fit_args(
        "RequestedToCapacityRatio", [ResourceSpec("intel.com/foo", 1)], [(0, 0), (100, 1)]
    )
    scores, codes = run_scores(args, pod, _SINGLE_NODES, pods, True)
    assert scores == expected
    assert codes == [Code.SUCCESS] * 2


# TestResourceBinPackingMultipleExtended -------------------------------------------------------
EXTS1 = {"intel.com/foo": 4, "intel.com/bar": 8}
EXTS2 = {"intel.com/foo": 8, "intel.com/bar": 4}
EXT_POD1 = {"intel.com/foo": "2", "intel.com/bar": "2"}
EXT_POD2 = {"intel.com/foo": "4", "intel.com/bar": "2"}
_MULTI_NODES = [
    make_node_ext("node1", 4000, 10000 * 1024 * 1024, EXTS2),
    make_node_ext("node2", 4000, 10000 * 1024 * 1024, EXTS1),
]


@pytest.mark.parametrize(
    ("pod", "pods", "expected"),
    [
        pytest.param(
            bare(make_pod()),
            [],
            [0, 0],
            id="TestResourceBinPackingMultipleExtended/nothing scheduled, nothing requested",
        ),
        pytest.param(
            make_pod().req(EXT_POD1).obj(),
            [bare(make_pod())],
            [4, 3],
            id="TestResourceBinPackingMultipleExtended/resources requested, pods scheduled with less resources",
        ),
        pytest.param(
            make_pod().req(EXT_POD1).obj(),
            [make_pod().req(EXT_POD2).node("node2").obj()],
            [4, 7],
            id="TestResourceBinPackingMultipleExtended/resources requested, pods scheduled with resources, on node with existing pod running ",
        ),
        pytest.param(
            make_pod().req(EXT_POD2).obj(),
            [bare(make_pod())],
            [5, 5],
            id="TestResourceBinPackingMultipleExtended/resources requested, pods scheduled with more resources",
        ),
    ],
)
def test_resource_bin_packing_multiple_extended(pod, pods, expected):
    args = fit_args(
        "RequestedToCapacityRatio",
        [ResourceSpec("intel.com/foo", 3), ResourceSpec("intel.com/bar", 5)],
        [(0, 0), (100, 1)],
    )
    scores, codes = run_scores(args, pod, _MULTI_NODES, pods)
    assert scores == expected
    assert codes == [Code.SUCCESS] * 2


# TestResourceAllocationScorerCalculateRequests ------------------------------------------------
ONE_MI = 1048576
DEFAULT_CPU = 100
DEFAULT_MEM = 200 * 1024 * 1024


def _pod(
    containers: list[dict[str, str] | None],
    init: list[dict[str, str] | None] = (),
    overhead: dict[str, str] | None = None,
) -> dict[str, Any]:
    def c(i: int, reqs: dict[str, str] | None, prefix: str) -> dict[str, Any]:
        out: dict[str, Any] = {"name": f"{prefix}{i}"}
        if reqs is not None:
            out["resources"] = {"requests": reqs}
        return out

    spec: dict[str, Any] = {"containers": [c(i, r, "c") for i, r in enumerate(containers)]}
    if init:
        spec["initContainers"] = [c(i, r, "i") for i, r in enumerate(init)]
    if overhead is not None:
        spec["overhead"] = overhead
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


_ONE = {"cpu": "1", "memory": "1Mi"}


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param(
            _pod([], overhead=_ONE),
            {"cpu": 1000, "memory": ONE_MI},
            id="TestResourceAllocationScorerCalculateRequests/overhead only",
        ),
        pytest.param(
            _pod([None]),
            {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/1x requestless container",
        ),
        pytest.param(
            _pod([None, None]),
            {"cpu": 2 * DEFAULT_CPU, "memory": 2 * DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/2x requestless container",
        ),
        pytest.param(
            _pod([_ONE, None]),
            {"cpu": 1000 + DEFAULT_CPU, "memory": ONE_MI + DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/request container + requestless container",
        ),
        pytest.param(
            _pod([_ONE, None], overhead=_ONE),
            {"cpu": 2000 + DEFAULT_CPU, "memory": 2 * ONE_MI + DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/container + requestless container + overhead",
        ),
        pytest.param(
            _pod([_ONE, None], init=[{"cpu": "3"}], overhead=_ONE),
            {"cpu": 4000, "memory": 2 * ONE_MI + DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/init container + container + requestless container + overhead",
        ),
        pytest.param(
            _pod([{"cpu": "3m", "memory": "3"}], init=[None, {"cpu": "1m", "memory": "1"}]),
            {"cpu": DEFAULT_CPU, "memory": DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/requestless init container + small init container + small container ",
        ),
        pytest.param(
            _pod([{"cpu": "3m", "memory": "3"}, None], init=[None, {"cpu": "1m", "memory": "1"}]),
            {"cpu": 3 + DEFAULT_CPU, "memory": 3 + DEFAULT_MEM},
            id="TestResourceAllocationScorerCalculateRequests/requestless init container + small init container + small container + requestless container ",
        ),
    ],
)
def test_resource_allocation_scorer_calculate_requests(pod, expected):
    scorer = ResourceAllocationScorer("", least_resource_scorer([]), [])  # Go's zero value
    for name, want in expected.items():
        assert scorer.calculate_pod_resource_request(Pod(pod), name) == want


# TestCalculateResourceAllocatableRequest (v1.36: allocatable and allocated, without the pod) ---
_DEVICE_PLUGIN_NODE = (
    make_node().name("resource-node").capacity({"extended.resource.dra.io/something": "4"}).obj()
)


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        pytest.param(
            _DEVICE_PLUGIN_NODE,
            (4, 0),
            id="TestCalculateResourceAllocatableRequest/device-plugin-resource-feature-disabled",
        ),
        # DRAExtendedResource on: a resource the node's allocatable has is never looked up in DRA
        pytest.param(
            _DEVICE_PLUGIN_NODE,
            (4, 0),
            id="TestCalculateResourceAllocatableRequest/device-plugin-resource-feature-enabled",
        ),
    ],
)
def test_calculate_resource_allocatable_request(node, expected):
    scorer = ResourceAllocationScorer("", least_resource_scorer([]), [])
    ni = NodeInfo(Node(node))
    assert (
        scorer.calculate_resource_allocatable_request(ni, "extended.resource.dra.io/something")
        == expected
    )


# beyond the Go tests: calculateNodeAllocatableRequest ----------------------------------------
def test_calculate_node_allocatable_request():
    """(requested, allocated, allocatable) per resource: requested = allocated + the pod's request;
    a scalar resource the pod does not request, and a resource the node lacks, stay 0."""
    resources = [
        ResourceSpec("cpu", 1),
        ResourceSpec("memory", 1),
        ResourceSpec("example.com/gpu", 1),
        ResourceSpec("example.com/fpga", 1),
        ResourceSpec("ephemeral-storage", 1),
    ]
    scorer = ResourceAllocationScorer("", least_resource_scorer(resources), resources, use_requested=True)
    n = make_node().name("n").capacity({"cpu": "4", "memory": "8", "example.com/gpu": "2"}).obj()
    running = make_pod().node("n").req({"cpu": "1", "memory": "2", "example.com/gpu": "1"}).obj()
    ni = NodeInfo(Node(n))
    ni.add_pod(Pod(running))
    got = scorer.calculate_node_allocatable_request(ni, [500, 1, 1, 1, 0])
    assert got == ([1500, 3, 2, 0, 0], [1000, 2, 1, 0, 0], [4000, 8, 2, 0, 0])
    # without the gpu request the gpu is left out
    assert scorer.calculate_node_allocatable_request(ni, [500, 1, 0, 0, 0])[2] == [4000, 8, 0, 0, 0]


# beyond the Go tests: InPlacePodLevelResourcesVerticalScaling (v1.36, beta, on) -------------------
@pytest.mark.parametrize(
    ("level_status", "expected"),
    [(True, 2000), (False, 1000)],
    ids=["gate on: max of spec and status", "gate off: spec only"],
)
def test_calculate_pod_resource_request_reads_pod_level_status(level_status, expected):
    """calculatePodResourceRequest passes InPlacePodLevelResourcesVerticalScalingEnabled to
    resource.PodRequests: a pod whose pod-level cpu request was scaled down from 2 to 1 but whose
    status still reports 2 counts 2 (BalancedAllocation builds its scorer with the gates)."""
    o = make_pod().req({"cpu": "500m"}).obj()
    o["spec"]["resources"] = {"requests": {"cpu": "1"}}
    o["status"]["resources"] = {"requests": {"cpu": "2"}}
    scorer = ResourceAllocationScorer(
        "",
        least_resource_scorer([]),
        [],
        use_requested=True,
        enable_in_place_pod_vertical_scaling=True,
        enable_pod_level_resources=True,
        enable_in_place_pod_level_resources_vertical_scaling=level_status,
    )
    assert scorer.calculate_pod_resource_request(Pod(o), "cpu") == expected
