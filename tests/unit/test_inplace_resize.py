"""What a running pod takes on its node, and when its update is a scale-down.

``Pod.node_requests`` / ``Pod.node_non_zero_requests`` follow kube-scheduler v1.36.3
``framework/types.go`` ``PodInfo.CalculateResource`` (status resources of an in-place resize:
InPlacePodVerticalScaling, InPlacePodLevelResourcesVerticalScaling; the non-zero defaults of
getNonMissingContainerRequests); ``NodeInfo`` counts them. ``pod_update_events`` reports
``UPDATE_POD_SCALE_DOWN`` as ``framework/events.go`` ``extractPodScaleDown`` does. Tables
transcribed from v1.36.3 ``framework/types_test.go`` (TestCalculatePodResourcesWithResize,
TestPodInfoCalculateResources) and ``framework/events_test.go``
(Test_podSchedulingPropertiesChange, the cases about labels, requests, tolerations and untracked
properties: the ones an assigned pod's update can carry here)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.runtime.cache import Cache
from kubesched.runtime.scheduler.handlers import pod_update_events
from kubesched.sdk import ActionType, Node, NodeInfo, Pod

Mi = 1024 * 1024

cpu500m = "500m"
mem500M = "500Mi"
cpu700m = "700m"
mem800M = "800Mi"

IN_PROGRESS = {"type": "PodResizeInProgress", "status": "True"}
DEFERRED = {"type": "PodResizePending", "status": "True", "reason": "Deferred"}
INFEASIBLE = {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}


def rl(cpu: str, mem: str) -> dict[str, str]:
    return {"cpu": cpu, "memory": mem}


def prepare_pod(
    pod_requests: dict | None,
    pod_status_resources: dict | None,
    requests: dict | None,
    status_resources: dict | None,
    init_requests: dict | None,
    init_status_resources: dict | None,
    sidecar_requests: dict | None,
    sidecar_status_resources: dict | None,
    resize_status: list[dict] | None,
) -> dict[str, Any]:
    """types_test.go preparePodInfo, as the pod's JSON. Go passes ``&tt.requests`` and
    ``&tt.statusResources``, never nil: container c1 and its status are always there."""
    spec: dict[str, Any] = {"containers": [], "initContainers": []}
    status: dict[str, Any] = {
        "phase": "Running",
        "containerStatuses": [],
        "initContainerStatuses": [],
    }
    if pod_requests is not None:
        spec["resources"] = {"requests": pod_requests}
    if pod_status_resources is not None:
        status["resources"] = {"requests": pod_status_resources}
    spec["containers"].append({"name": "c1", "resources": {"requests": requests or {}}})
    status["containerStatuses"].append(
        {"name": "c1", "resources": {"requests": status_resources or {}}}
    )
    if init_requests is not None:
        spec["initContainers"].append({"name": "i1", "resources": {"requests": init_requests}})
    if init_status_resources is not None:
        status["initContainerStatuses"].append(
            {"name": "i1", "resources": {"requests": init_status_resources}}
        )
    if sidecar_requests is not None:
        spec["initContainers"].append(
            {"name": "s1", "resources": {"requests": sidecar_requests}, "restartPolicy": "Always"}
        )
    if sidecar_status_resources is not None:
        status["initContainerStatuses"].append(
            {"name": "s1", "resources": {"requests": sidecar_status_resources}}
        )
    if resize_status:
        status["conditions"] = list(resize_status)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "pod_resize_test", "name": "testpod", "uid": "testpod"},
        "spec": spec,
        "status": status,
    }


def case(
    name: str,
    expected: tuple[int, int, int, int],
    *,
    podLevelRequests: dict | None = None,
    requests: dict | None = None,
    statusResources: dict | None = None,
    podLevelStatusResources: dict | None = None,
    initRequests: dict | None = None,
    initStatusResources: dict | None = None,
    resizeStatus: list[dict] | None = None,
    sidecarRequests: dict | None = None,
    sidecarStatusResources: dict | None = None,
) -> Any:
    d = prepare_pod(
        podLevelRequests,
        podLevelStatusResources,
        requests,
        statusResources,
        initRequests,
        initStatusResources,
        sidecarRequests,
        sidecarStatusResources,
        resizeStatus,
    )
    return pytest.param(d, expected, id=f"TestCalculatePodResourcesWithResize/{name}")


# expected: (Resource.MilliCPU, Resource.Memory, Non0CPU, Non0Mem)
CALCULATE_CASES = [
    case(
        "Pod with no pending resize",
        (500, 500 * Mi, 500, 500 * Mi),
        requests=rl(cpu500m, mem500M),
        statusResources=rl(cpu500m, mem500M),
    ),
    case(
        "Pod with pod-level resources no pending resize",
        (700, 500 * Mi, 700, 500 * Mi),
        podLevelRequests=rl(cpu700m, mem500M),
        requests=rl(cpu500m, mem500M),
        podLevelStatusResources=rl(cpu500m, mem500M),
        statusResources=rl(cpu700m, mem500M),
    ),
    case(
        "Pod with resize in progress",
        (500, 500 * Mi, 500, 500 * Mi),
        requests=rl(cpu500m, mem500M),
        statusResources=rl(cpu500m, mem500M),
        resizeStatus=[IN_PROGRESS],
    ),
    case(
        "Pod with pod-level resources and resize in progress",
        (700, 500 * Mi, 700, 500 * Mi),
        podLevelRequests=rl(cpu700m, mem500M),
        requests=rl(cpu500m, mem500M),
        podLevelStatusResources=rl(cpu500m, mem500M),
        statusResources=rl(cpu700m, mem500M),
        resizeStatus=[IN_PROGRESS],
    ),
    case(
        "Pod with deferred resize",
        (700, 800 * Mi, 700, 800 * Mi),
        requests=rl(cpu700m, mem800M),
        statusResources=rl(cpu500m, mem500M),
        resizeStatus=[DEFERRED],
    ),
    case(
        "Pod with pod-level resources and with deferred resize",
        (700, 800 * Mi, 700, 800 * Mi),
        podLevelRequests=rl(cpu700m, mem800M),
        requests=rl(cpu500m, mem500M),
        podLevelStatusResources=rl(cpu500m, mem500M),
        statusResources=rl(cpu500m, mem500M),
        resizeStatus=[DEFERRED],
    ),
    case(
        "Pod with infeasible resize",
        (500, 500 * Mi, 500, 500 * Mi),
        requests=rl(cpu700m, mem800M),
        statusResources=rl(cpu500m, mem500M),
        resizeStatus=[INFEASIBLE],
    ),
    case(
        "Pod with init container and no pending resize",
        (700, 800 * Mi, 700, 800 * Mi),
        requests=rl(cpu500m, mem500M),
        statusResources=rl(cpu500m, mem500M),
        initRequests=rl(cpu700m, mem800M),
        initStatusResources=rl(cpu700m, mem800M),
    ),
    case(
        "Pod with sider container and no pending resize",
        (500 + 700, 500 * Mi + 800 * Mi, 500 + 700, 500 * Mi + 800 * Mi),
        requests=rl(cpu500m, mem500M),
        statusResources=rl(cpu500m, mem500M),
        initRequests=rl(cpu700m, mem800M),
        initStatusResources=rl(cpu700m, mem800M),
        sidecarRequests=rl(cpu700m, mem800M),
        sidecarStatusResources=rl(cpu700m, mem800M),
    ),
]


def _node(name: str = "n1") -> Node:
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )


def _on_node(d: dict[str, Any], node: str = "n1") -> dict[str, Any]:
    d = copy.deepcopy(d)
    d["spec"]["nodeName"] = node
    return d


def _totals(ni: NodeInfo) -> tuple[int, int, int, int]:
    return (
        ni.requested.milli_cpu,
        ni.requested.memory,
        ni.non_zero_requested.milli_cpu,
        ni.non_zero_requested.memory,
    )


@pytest.mark.parametrize(("raw", "expected"), CALCULATE_CASES)
def test_calculate_pod_resources_with_resize(
    raw: dict[str, Any], expected: tuple[int, int, int, int]
):
    p = Pod(raw)
    r = p.node_requests
    assert (r.milli_cpu, r.memory, *p.node_non_zero_requests) == expected
    assert r.scalar == {} and r.ephemeral_storage == 0


@pytest.mark.parametrize(("raw", "expected"), CALCULATE_CASES)
def test_calculate_pod_resources_with_resize_on_node(
    raw: dict[str, Any], expected: tuple[int, int, int, int]
):
    """The node counts what CalculateResource gives, on add and on remove (NodeInfo.update)."""
    p = Pod(_on_node(raw))
    ni = NodeInfo(_node(), [p])
    assert _totals(ni) == expected
    ni.remove_pod(p)
    assert _totals(ni) == (0, 0, 0, 0)

    c = Cache()
    c.add_node(_node())
    c.add_pod(p)
    ci = c.node_info("n1")
    assert ci is not None
    assert _totals(ci) == expected


# TestPodInfoCalculateResources: no status; pod-level requests and the non-zero defaults ----------
# (its DRANodeAllocatableResources cases but the gate-disabled one are left out: alpha, off)


def _ctr(**req: str) -> dict[str, Any]:
    return {"resources": {"requests": {k.replace("_", "-"): v for k, v in req.items()}}}


def calc_case(
    name: str,
    expected: tuple[int, int, int, int, int],
    containers: list[dict],
    *,
    init: list[dict] | None = None,
    pod_level: dict | None = None,
    status: dict | None = None,
    go: bool = True,
) -> Any:
    spec: dict[str, Any] = {"containers": containers}
    if init is not None:
        spec["initContainers"] = init
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    d = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "", "namespace": ""},
        "spec": spec,
        "status": status or {},
    }
    return pytest.param(d, expected, id=f"TestPodInfoCalculateResources/{name}" if go else name)


# expected: (MilliCPU, Memory, EphemeralStorage, Non0CPU, Non0Mem)
POD_INFO_CASES = [
    calc_case("requestless container", (0, 0, 0, 100, 200 * Mi), [{}]),
    calc_case(
        "1X container with requests",
        (500, 500 * Mi, 0, 500, 500 * Mi),
        [_ctr(cpu=cpu500m, memory=mem500M)],
    ),
    calc_case(
        "2X container with requests",
        (1200, 1300 * Mi, 0, 1200, 1300 * Mi),
        [_ctr(cpu=cpu500m, memory=mem500M), _ctr(cpu=cpu700m, memory=mem800M)],
    ),
    calc_case(
        "1X container and 1X init container with pod-level requests",
        (1200, 1200 * Mi, 0, 1200, 1200 * Mi),
        [_ctr(cpu=cpu500m, memory=mem500M)],
        init=[_ctr(cpu=cpu500m, memory=mem500M)],
        pod_level=rl("1200m", "1200Mi"),
    ),
    calc_case(
        "1X container and 1X sidecar container with pod-level requests",
        (1200, 1200 * Mi, 0, 1200, 1200 * Mi),
        [_ctr(cpu=cpu500m, memory=mem500M)],
        init=[{**_ctr(cpu=cpu500m, memory=mem500M), "restartPolicy": "Always"}],
        pod_level=rl("1200m", "1200Mi"),
    ),
    calc_case(
        "1X container with pod-level memory requests",
        (0, 1200 * Mi, 0, 100, 1200 * Mi),
        [{"resources": {}}],
        init=[{"resources": {}}],
        pod_level={"memory": "1200Mi"},
    ),
    calc_case(
        "1X container with pod-level cpu requests",
        (500, 0, 0, 500, 200 * Mi),
        [{"resources": {}}],
        init=[{"resources": {}}],
        pod_level={"cpu": cpu500m},
    ),
    calc_case(
        "1X container unsupported resources and pod-level supported resources",
        (500, 0, 800 * Mi, 500, 200 * Mi),
        [_ctr(ephemeral_storage=mem800M)],
        init=[_ctr(ephemeral_storage=mem500M)],
        pod_level={"cpu": cpu500m},
    ),
    calc_case(
        "DRA gate disabled, with node allocatable resource claim",
        (500, 500 * Mi, 0, 500, 500 * Mi),
        [
            {
                "resources": {
                    "requests": rl(cpu500m, mem500M),
                    "claims": [{"name": "node-allocatable-claim"}],
                }
            }
        ],
        status={
            "nodeAllocatableResourceClaimStatuses": [
                {"resourceClaimName": "node-allocatable-claim", "resources": rl("100m", "200Mi")}
            ]
        },
    ),
    # getNonMissingContainerRequests with pod-level requests: a resource some container requests
    # is not defaulted for the containers that do not
    calc_case(
        "pod-level cpu, one container requests memory: no default memory for the other",
        (500, 1024 * Mi, 0, 500, 1024 * Mi),
        [_ctr(memory="1Gi"), {"name": "b"}],
        pod_level={"cpu": cpu500m},
        go=False,
    ),
    calc_case(
        "pod-level memory, one container requests cpu: no default cpu for the other",
        (300, 64 * Mi, 0, 300, 64 * Mi),
        [_ctr(cpu="300m"), {"name": "b"}],
        pod_level={"memory": "64Mi"},
        go=False,
    ),
    calc_case(
        "pod-level hugepages only: cpu and memory defaulted where neither level requests them",
        (300, 0, 0, 300, 400 * Mi),
        [_ctr(cpu="300m"), {"name": "b"}],
        pod_level={"hugepages-2Mi": "2Mi"},
        go=False,
    ),
]


@pytest.mark.parametrize(("raw", "expected"), POD_INFO_CASES)
def test_pod_info_calculate_resources(
    raw: dict[str, Any], expected: tuple[int, int, int, int, int]
):
    p = Pod(raw)
    r = p.node_requests
    assert (r.milli_cpu, r.memory, r.ephemeral_storage, *p.node_non_zero_requests) == expected
    ni = NodeInfo(_node(), [p])
    assert (
        ni.requested.milli_cpu,
        ni.requested.memory,
        ni.requested.ephemeral_storage,
        *_totals(ni)[2:],
    ) == expected


# a pending pod: no status resources, node_requests are the spec's requests -----------------------


def _pending(spec: dict[str, Any], status: dict[str, Any] | None = None) -> Pod:
    d: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": "default", "name": "p", "uid": "p"},
        "spec": spec,
    }
    if status is not None:
        d["status"] = status
    return Pod(d)


PENDING_CASES = [
    pytest.param(
        _pending({"containers": [{"name": "c1", "resources": {"requests": rl("300m", "1Gi")}}]}),
        id="containers",
    ),
    pytest.param(
        _pending(
            {
                "containers": [
                    {"name": "c1", "resources": {"requests": rl("300m", "1Gi")}},
                    {"name": "c2"},
                ],
                "initContainers": [
                    {
                        "name": "s1",
                        "restartPolicy": "Always",
                        "resources": {"requests": rl("200m", "100Mi")},
                    },
                    {"name": "i1", "resources": {"requests": rl("2", "64Mi")}},
                ],
                "overhead": {"cpu": "10m"},
            },
            {"phase": "Pending"},
        ),
        id="sidecar, init container, a container with no requests, overhead",
    ),
    pytest.param(
        _pending(
            {
                "resources": {"requests": rl("1", "2Gi")},
                "containers": [
                    {
                        "name": "c1",
                        "resources": {"requests": {"cpu": "300m", "example.com/gpu": "1"}},
                    }
                ],
            },
            {
                "phase": "Pending",
                "containerStatuses": [{"name": "c1", "allocatedResources": {"cpu": "5"}}],
            },
        ),
        id="pod-level requests; a container status without resources is not read",
    ),
    pytest.param(
        _pending(
            {"containers": [{"name": "c1", "resources": {"requests": rl("300m", "1Gi")}}]},
            {"phase": "Pending", "conditions": [INFEASIBLE]},
        ),
        id="an infeasible resize condition with no status resources keeps the spec",
    ),
    pytest.param(
        _pending(
            {"resources": {"requests": rl("1", "2Gi")}, "containers": [{"name": "c1"}]},
            {"phase": "Pending", "conditions": [INFEASIBLE], "allocatedResources": {"cpu": "3"}},
        ),
        id="pod-level requests, an infeasible resize condition and no status.resources keep the spec",
    ),
]


@pytest.mark.parametrize("p", PENDING_CASES)
def test_pending_pod_node_requests_are_its_requests(p: Pod):
    assert p.node_requests.as_dict() == p.requests.as_dict()
    assert p.node_non_zero_requests == p.non_zero_requests
    ni = NodeInfo(_node(), [p])
    assert ni.requested.as_dict() == {**p.requests.as_dict(), "pods": 0}
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == p.non_zero_requests


def test_pending_pod_values():
    """The values themselves, for the second and third pending pods above."""
    p = PENDING_CASES[1].values[0]
    # containers 300m + 0 + sidecar 200m = 500m, init peak 2000m + 200m = 2200m; + overhead 10m
    assert (p.node_requests.milli_cpu, p.node_requests.memory) == (2210, 1024 * Mi + 100 * Mi)
    # c2 counts 100m / 200Mi: 300+100+200 = 600 < 2200 (+10)
    assert p.node_non_zero_requests == (2210, 1024 * Mi + 200 * Mi + 100 * Mi)
    q = PENDING_CASES[2].values[0]
    assert (q.node_requests.milli_cpu, q.node_requests.memory) == (1000, 2048 * Mi)
    assert q.node_requests.scalar == {"example.com/gpu": 1}


# extractPodScaleDown -----------------------------------------------------------------------------


def _app_pod(cpu: str, labels: dict[str, str] | None = None) -> Pod:
    """events_test.go podWithBigRequest / podWithSmallRequest(AndLabel): a request and the same
    allocatedResources in the status (no status resources)."""
    meta: dict[str, Any] = {"name": "", "namespace": ""}
    if labels:
        meta["labels"] = labels
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"containerStatuses": [{"name": "app", "allocatedResources": {"cpu": cpu}}]},
        }
    )


def _make_pod(
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    node: str | None = None,
    tolerations: list[str] | None = None,
) -> Pod:
    """st.MakePod() with Label / Annotation / Node / Toleration."""
    meta: dict[str, Any] = {"name": "", "namespace": ""}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"containers": []}
    if node:
        spec["nodeName"] = node
    if tolerations:
        spec["tolerations"] = [{"key": k, "operator": "Exists"} for k in tolerations]
    return Pod({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})


podWithBigRequest = _app_pod("101m")
podWithSmallRequestAndLabel = _app_pod("100m", {"foo": "bar"})
podWithSmallRequest = _app_pod("100m")

PROPERTIES_CASES = [
    pytest.param(
        _make_pod({"foo": "bar2"}, node="node"),
        _make_pod({"foo": "bar"}, node="node"),
        [ActionType.UPDATE_POD_LABEL],
        id="assigned pod is updated",
    ),
    pytest.param(
        _make_pod({"foo": "bar2"}),
        _make_pod({"foo": "bar"}),
        [ActionType.UPDATE_POD_LABEL],
        id="only label is updated",
    ),
    pytest.param(
        podWithBigRequest,
        podWithSmallRequest,
        [ActionType.UPDATE_POD_SCALE_DOWN],
        id="pod's resource request is scaled down",
    ),
    pytest.param(
        podWithSmallRequest,
        podWithBigRequest,
        [ActionType.UPDATE],
        id="pod's resource request is scaled up",
    ),
    pytest.param(
        podWithBigRequest,
        podWithSmallRequestAndLabel,
        [ActionType.UPDATE_POD_LABEL, ActionType.UPDATE_POD_SCALE_DOWN],
        id="both pod's resource request and label are updated",
    ),
    pytest.param(
        _make_pod(annotations={"foo": "bar2"}),
        _make_pod(annotations={"foo": "bar"}),
        [ActionType.UPDATE],
        id="untracked properties of pod is updated",
    ),
    pytest.param(
        _make_pod(tolerations=["key"]),
        _make_pod(tolerations=["key", "key2"]),
        [ActionType.UPDATE_POD_TOLERATION],
        id="pod's tolerations are updated",
    ),
]


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(*p.values, id=f"Test_podSchedulingPropertiesChange/{p.id}")
        for p in PROPERTIES_CASES
    ],
)
def test_pod_scheduling_properties_change(old: Pod, new: Pod, want: list[ActionType]):
    assert pod_update_events(old, new) == want


def _resized(
    spec_cpu: str | None,
    status_cpu: str | None,
    *,
    memory: str | None = "1Gi",
    level: tuple[str, str] | None = None,
    conditions: list[dict] | None = None,
) -> Pod:
    """A running pod on n1 with container c1 (spec ``spec_cpu``; status resources ``status_cpu``
    when given) and, with ``level``, pod-level requests (spec cpu, status cpu)."""
    req: dict[str, str] = {}
    if spec_cpu is not None:
        req["cpu"] = spec_cpu
    if memory is not None:
        req["memory"] = memory
    spec: dict[str, Any] = {
        "nodeName": "n1",
        "containers": [{"name": "c1", "resources": {"requests": req}}],
    }
    cs: dict[str, Any] = {"name": "c1"}
    if status_cpu is not None:
        sreq = {"cpu": status_cpu}
        if memory is not None:
            sreq["memory"] = memory
        cs["resources"] = {"requests": sreq}
    status: dict[str, Any] = {"phase": "Running", "containerStatuses": [cs]}
    if level is not None:
        spec["resources"] = {"requests": {"cpu": level[0]}}
        status["resources"] = {"requests": {"cpu": level[1]}}
    if conditions:
        status["conditions"] = conditions
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"namespace": "default", "name": "r", "uid": "r"},
            "spec": spec,
            "status": status,
        }
    )


SCALE_CASES = [
    # (old, new, scaled down, node milli-CPU before, after)
    pytest.param(
        _resized("500m", "500m"),
        _resized("700m", "500m"),
        False,
        500,
        700,
        id="an increase is not a scale-down",
    ),
    pytest.param(
        _resized("700m", "500m"),
        _resized("700m", "700m"),
        False,
        700,
        700,
        id="the kubelet actuating an increase",
    ),
    pytest.param(
        _resized("500m", "700m"),
        _resized("500m", "500m"),
        True,
        700,
        500,
        id="a status-only shrink of a resized pod is a scale-down",
    ),
    pytest.param(
        _resized("700m", "700m"),
        _resized("500m", "700m"),
        False,
        700,
        700,
        id="a spec shrink the kubelet has not actuated is not a scale-down",
    ),
    pytest.param(
        _resized("700m", "700m"),
        _resized("700m", "500m", conditions=[INFEASIBLE]),
        True,
        700,
        500,
        id="an infeasible resize counts the status alone",
    ),
    pytest.param(
        _resized("100m", None, level=("1", "1")),
        _resized("100m", None, level=("1", "800m")),
        False,
        1000,
        1000,
        id="pod-level status below its spec is not a scale-down",
    ),
    pytest.param(
        _resized("100m", None, level=("600m", "1")),
        _resized("100m", None, level=("600m", "600m")),
        True,
        1000,
        600,
        id="a pod-level status-only shrink is a scale-down",
    ),
    pytest.param(
        _resized("500m", None),
        _resized(None, None),
        True,
        500,
        0,
        id="a request removed is a scale-down",
    ),
    pytest.param(
        _resized("100900u", None),
        _resized("100100u", None),
        False,
        101,
        101,
        id="a shrink within one milli-unit is not a scale-down",
    ),
    pytest.param(
        _resized("500m", None, memory="1001m"),
        _resized("500m", None, memory="1"),
        True,
        500,
        500,
        id="memory compared in milli-units",
    ),
    pytest.param(
        _resized("500m", "700m"), _resized("500m", "700m"), False, 700, 700, id="no change"
    ),
]


@pytest.mark.parametrize(("old", "new", "down", "before", "after"), SCALE_CASES)
def test_extract_pod_scale_down(old: Pod, new: Pod, down: bool, before: int, after: int):
    events = pod_update_events(old, new)
    assert (ActionType.UPDATE_POD_SCALE_DOWN in events) is down
    assert events == ([ActionType.UPDATE_POD_SCALE_DOWN] if down else [ActionType.UPDATE])
    # the node counts the same requests, and follows the update
    c = Cache()
    c.add_node(_node())
    c.add_pod(old)
    ni = c.node_info("n1")
    assert ni is not None
    assert ni.requested.milli_cpu == before
    c.add_pod(new)
    assert ni.requested.milli_cpu == after
    assert len(ni.pods) == 1


# the cache takes an assumed pod's computed requests for the API server's copy ---------------
def _bound(raw: dict[str, Any], node: str, **status: Any) -> dict[str, Any]:
    out = copy.deepcopy(raw)
    out["spec"]["nodeName"] = node
    out["status"] = {"phase": "Running", **status}
    return out


def test_the_cluster_copy_of_an_assumed_pod_adopts_its_requests() -> None:
    raw = {"metadata": {"name": "p", "uid": "u1"}, "spec": {"containers": [{"name": "c", "resources": {"requests": rl(cpu500m, mem500M)}}]}}
    cache = Cache()
    cache.add_node(Node({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
    assumed = Pod(raw).with_node_name("n")
    cache.assume_pod(assumed)
    bound = Pod(_bound(raw, "n"))
    cache.add_pod(bound)
    assert bound.__dict__["node_requests"] is assumed.node_requests  # not parsed again
    assert bound.node_non_zero_requests == (500, 500 * Mi)
    ni = cache.node_info("n")
    assert ni is not None and ni.requested.milli_cpu == 500 and len(ni.pods) == 1


@pytest.mark.parametrize("change", ["containers", "status"])
def test_a_changed_pod_computes_its_own_requests(change: str) -> None:
    raw = {"metadata": {"name": "p", "uid": "u1"}, "spec": {"containers": [{"name": "c", "resources": {"requests": rl(cpu500m, mem500M)}}]}}
    old = Pod(raw)
    _ = old.node_requests
    if change == "containers":
        new_raw = _bound(raw, "n")
        new_raw["spec"]["containers"][0]["resources"]["requests"] = rl(cpu700m, mem800M)
        want = 700
    else:  # an in-place resize shows in the status: the status resources count
        new_raw = _bound(raw, "n", containerStatuses=[{"name": "c", "resources": {"requests": rl(cpu700m, mem800M)}}])
        want = 700
    new = Pod(new_raw)
    new.adopt_requests(old)
    assert "node_requests" not in new.__dict__
    assert new.node_requests.milli_cpu == want
