"""NodeResourcesFit, transcribed from kube-scheduler's
``pkg/scheduler/framework/plugins/noderesources/fit_test.go``.

The v1.36.3 tables. Left out: the cases that need DRA objects (DRAExtendedResource, beta and on
in v1.36, delegates extended resources served by a DeviceClass to DynamicResources; kubesched
does not model DeviceClasses, and with none Go takes the same path as here), the DeviceClass hint
(Test_isSchedulableAfterDeviceClassChange), TestFitSignPod (Go's SignPod fragments),
TestScorePlacement_Resources (TopologyAwareWorkloadScheduling, alpha, off) and
TestComputePodResourceRequestWithNodeAllocatableDRA (DRANodeAllocatableResources, alpha, off).
Everything else is here, under the Go test function and case name.

Go builds the plugin with ``feature.Features{}`` (every gate off) and turns single gates on; so do
these tests (``ALL_OFF``). Go's hints return ``(Queue, err)`` for objects of the wrong type; the
Python hints have no error channel and return QUEUE.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from kubesched.runtime.plugins.noderesources import Fit, InsufficientResource, NodeResourcesFitArgs
from kubesched.runtime.plugins.noderesources.features import ALL_OFF, Features
from kubesched.runtime.plugins.noderesources.fit import (
    fits_request,
    have_any_requested_resources_increased,
    is_fit,
)
from kubesched.runtime.plugins.noderesources.pod_requests import compute_pod_resource_request
from kubesched.sdk import (
    ActionType,
    Code,
    CycleState,
    Node,
    NodeInfo,
    Pod,
    QueueingHint,
    Status,
    build_args,
)
from kubesched.testing import build_plugin, make_handle, make_node, make_pod

EXT_A = "example.com/aaa"
EXT_B = "example.com/bbb"
K8S_IO_A = "kubernetes.io/something"
K8S_IO_B = "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
DRA_EXT = "extended.resource.dra.io/something"

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.SKIP


# helpers (fit_test.go's) ---------------------------------------------------------------------
def R(
    milli_cpu: int = 0, memory: int = 0, ephemeral: int = 0, scalar: dict[str, int] | None = None
) -> dict[str, Any]:
    """A framework.Resource literal."""
    return {
        "milli_cpu": milli_cpu,
        "memory": memory,
        "ephemeral": ephemeral,
        "scalar": scalar or {},
    }


def _requests(r: dict[str, Any]) -> dict[str, str]:
    rl = {
        "cpu": f"{r['milli_cpu']}m",
        "memory": str(r["memory"]),
        "pods": "0",
        "ephemeral-storage": str(r["ephemeral"]),
    }
    rl.update({k: str(v) for k, v in r["scalar"].items()})
    return rl


def new_resource_pod(*usage: dict[str, Any]) -> dict[str, Any]:
    """newResourcePod: one container per usage, requesting exactly that."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": ""},
        "spec": {
            "containers": [
                {"name": f"c{i}", "resources": {"requests": _requests(u)}}
                for i, u in enumerate(usage)
            ]
        },
    }


def new_resource_init_pod(pod: dict[str, Any], *usage: dict[str, Any]) -> dict[str, Any]:
    pod["spec"]["initContainers"] = [
        {"name": f"i{i}", "resources": {"requests": _requests(u)}} for i, u in enumerate(usage)
    ]
    return pod


def new_resource_overhead_pod(pod: dict[str, Any], overhead: dict[str, str]) -> dict[str, Any]:
    pod["spec"]["overhead"] = dict(overhead)
    return pod


def new_pod_level_resources_pod(pod: dict[str, Any], requests: dict[str, str]) -> dict[str, Any]:
    pod["spec"]["resources"] = {"requests": dict(requests)}
    return pod


def make_resources(
    milli_cpu: int, memory: int, pods: int, ext_a: int, storage: int, huge_a: int
) -> dict[str, str]:
    return {
        "cpu": f"{milli_cpu}m",
        "memory": str(memory),
        "pods": str(pods),
        EXT_A: str(ext_a),
        "ephemeral-storage": str(storage),
        HUGE_A: str(huge_a),
    }


def raw_node(capacity: dict[str, str] | None, allocatable: dict[str, str] | None) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if capacity is not None:
        status["capacity"] = capacity
    if allocatable is not None:
        status["allocatable"] = allocatable
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": ""}, "status": status}


def node_info(node: dict[str, Any], *pods: dict[str, Any]) -> NodeInfo:
    """framework.NewNodeInfo(pods...) then SetNode(node)."""
    ni = NodeInfo(None, [Pod(p) for p in pods])
    ni.set_node(Node(node))
    return ni


def bare(w: Any) -> dict[str, Any]:
    """A pod built with st.MakePod() and no container (the Python builder adds one)."""
    o = w.obj()
    o["spec"]["containers"] = []
    return o


def new_fit(args: dict[str, Any] | None = None, handle: Any = None, **features: bool) -> Fit:
    return Fit(
        build_args(NodeResourcesFitArgs, args), handle, features=replace(ALL_OFF, **features)
    )


def insufficient(
    name: str, requested: int, used: int, capacity: int, unresolvable: bool = False
) -> InsufficientResource:
    return InsufficientResource(
        name, f"Insufficient {name}", requested, used, capacity, unresolvable
    )


def assert_status(got: Status | None, want: Status | None) -> None:
    if want is None:
        assert got is None or got.is_success(), got
        return
    assert got is not None
    assert (got.code, got.reasons) == (want.code, want.reasons)


def unsched(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def E(name: str) -> str:
    """getErrReason."""
    return f"Insufficient {name}"


# TestEnoughRequests ---------------------------------------------------------------------------
def _enough(name, pod, existing, want_status=None, want=(), args=None, pod_level=False):
    return pytest.param(
        pod, existing, args, pod_level, want_status, list(want), id=f"TestEnoughRequests/{name}"
    )


ENOUGH_REQUESTS = [
    _enough("no resources requested always fits", new_resource_pod(), [R(10, 20)]),
    _enough(
        "too many resources fails",
        new_resource_pod(R(1, 1)),
        [R(10, 20)],
        unsched(E("cpu"), E("memory")),
        [insufficient("cpu", 1, 10, 10), insufficient("memory", 1, 20, 20)],
    ),
    _enough(
        "too many resources fails due to init container cpu",
        new_resource_init_pod(new_resource_pod(R(1, 1)), R(3, 1)),
        [R(8, 19)],
        unsched(E("cpu")),
        [insufficient("cpu", 3, 8, 10)],
    ),
    _enough(
        "too many resources fails due to highest init container cpu",
        new_resource_init_pod(new_resource_pod(R(1, 1)), R(3, 1), R(2, 1)),
        [R(8, 19)],
        unsched(E("cpu")),
        [insufficient("cpu", 3, 8, 10)],
    ),
    _enough(
        "too many resources fails due to init container memory",
        new_resource_init_pod(new_resource_pod(R(1, 1)), R(1, 3)),
        [R(9, 19)],
        unsched(E("memory")),
        [insufficient("memory", 3, 19, 20)],
    ),
    _enough(
        "too many resources fails due to highest init container memory",
        new_resource_init_pod(new_resource_pod(R(1, 1)), R(1, 3), R(1, 2)),
        [R(9, 19)],
        unsched(E("memory")),
        [insufficient("memory", 3, 19, 20)],
    ),
    _enough(
        "init container fits because it's the max, not sum, of containers and init containers",
        new_resource_init_pod(new_resource_pod(R(1, 1)), R(1, 1)),
        [R(9, 19)],
    ),
    _enough(
        "multiple init containers fit because it's the max, not sum, of containers and init containers",
        new_resource_init_pod(new_resource_pod(R(1, 1)), R(1, 1), R(1, 1)),
        [R(9, 19)],
    ),
    _enough("both resources fit", new_resource_pod(R(1, 1)), [R(5, 5)]),
    _enough(
        "one resource memory fits",
        new_resource_pod(R(2, 1)),
        [R(9, 5)],
        unsched(E("cpu")),
        [insufficient("cpu", 2, 9, 10)],
    ),
    _enough(
        "one resource cpu fits",
        new_resource_pod(R(1, 2)),
        [R(5, 19)],
        unsched(E("memory")),
        [insufficient("memory", 2, 19, 20)],
    ),
    _enough("equal edge case", new_resource_pod(R(5, 1)), [R(5, 19)]),
    _enough(
        "equal edge case for init container",
        new_resource_init_pod(new_resource_pod(R(4, 1)), R(5, 1)),
        [R(5, 19)],
    ),
    _enough("extended resource fits", new_resource_pod(R(scalar={EXT_A: 1})), [R()]),
    _enough(
        "extended resource fits for init container",
        new_resource_init_pod(new_resource_pod(R()), R(scalar={EXT_A: 1})),
        [R()],
    ),
    _enough(
        "extended resource capacity enforced",
        new_resource_pod(R(1, 1, scalar={EXT_A: 10})),
        [R(0, 0, scalar={EXT_A: 0})],
        unresolvable(E(EXT_A)),
        [insufficient(EXT_A, 10, 0, 5, True)],
    ),
    _enough(
        "extended resource capacity enforced for init container",
        new_resource_init_pod(new_resource_pod(R()), R(1, 1, scalar={EXT_A: 10})),
        [R(0, 0, scalar={EXT_A: 0})],
        unresolvable(E(EXT_A)),
        [insufficient(EXT_A, 10, 0, 5, True)],
    ),
    _enough(
        "extended resource allocatable enforced",
        new_resource_pod(R(1, 1, scalar={EXT_A: 1})),
        [R(0, 0, scalar={EXT_A: 5})],
        unsched(E(EXT_A)),
        [insufficient(EXT_A, 1, 5, 5)],
    ),
    _enough(
        "extended resource allocatable enforced for init container",
        new_resource_init_pod(new_resource_pod(R()), R(1, 1, scalar={EXT_A: 1})),
        [R(0, 0, scalar={EXT_A: 5})],
        unsched(E(EXT_A)),
        [insufficient(EXT_A, 1, 5, 5)],
    ),
    _enough(
        "extended resource allocatable enforced for multiple containers",
        new_resource_pod(R(1, 1, scalar={EXT_A: 3}), R(1, 1, scalar={EXT_A: 3})),
        [R(0, 0, scalar={EXT_A: 2})],
        unresolvable(E(EXT_A)),
        [insufficient(EXT_A, 6, 2, 5, True)],
    ),
    _enough(
        "extended resource allocatable admits multiple init containers",
        new_resource_init_pod(
            new_resource_pod(R()), R(1, 1, scalar={EXT_A: 3}), R(1, 1, scalar={EXT_A: 3})
        ),
        [R(0, 0, scalar={EXT_A: 2})],
    ),
    _enough(
        "extended resource allocatable enforced for multiple init containers",
        new_resource_init_pod(
            new_resource_pod(R()), R(1, 1, scalar={EXT_A: 6}), R(1, 1, scalar={EXT_A: 3})
        ),
        [R(0, 0, scalar={EXT_A: 2})],
        unresolvable(E(EXT_A)),
        [insufficient(EXT_A, 6, 2, 5, True)],
    ),
    _enough(
        "extended resource allocatable enforced for unknown resource",
        new_resource_pod(R(1, 1, scalar={EXT_B: 1})),
        [R(0, 0)],
        unresolvable(E(EXT_B)),
        [insufficient(EXT_B, 1, 0, 0, True)],
    ),
    _enough(
        "extended resource allocatable enforced for unknown resource for init container",
        new_resource_init_pod(new_resource_pod(R()), R(1, 1, scalar={EXT_B: 1})),
        [R(0, 0)],
        unresolvable(E(EXT_B)),
        [insufficient(EXT_B, 1, 0, 0, True)],
    ),
    _enough(
        "kubernetes.io resource capacity enforced",
        new_resource_pod(R(1, 1, scalar={K8S_IO_A: 10})),
        [R(0, 0)],
        unresolvable(E(K8S_IO_A)),
        [insufficient(K8S_IO_A, 10, 0, 0, True)],
    ),
    _enough(
        "kubernetes.io resource capacity enforced for init container",
        new_resource_init_pod(new_resource_pod(R()), R(1, 1, scalar={K8S_IO_B: 10})),
        [R(0, 0)],
        unresolvable(E(K8S_IO_B)),
        [insufficient(K8S_IO_B, 10, 0, 0, True)],
    ),
    _enough(
        "hugepages resource capacity enforced",
        new_resource_pod(R(1, 1, scalar={HUGE_A: 10})),
        [R(0, 0, scalar={HUGE_A: 0})],
        unresolvable(E(HUGE_A)),
        [insufficient(HUGE_A, 10, 0, 5, True)],
    ),
    _enough(
        "hugepages resource capacity enforced for init container",
        new_resource_init_pod(new_resource_pod(R()), R(1, 1, scalar={HUGE_A: 10})),
        [R(0, 0, scalar={HUGE_A: 0})],
        unresolvable(E(HUGE_A)),
        [insufficient(HUGE_A, 10, 0, 5, True)],
    ),
    _enough(
        "hugepages resource allocatable enforced for multiple containers",
        new_resource_pod(R(1, 1, scalar={HUGE_A: 3}), R(1, 1, scalar={HUGE_A: 3})),
        [R(0, 0, scalar={HUGE_A: 2})],
        unresolvable(E(HUGE_A)),
        [insufficient(HUGE_A, 6, 2, 5, True)],
    ),
    _enough(
        "skip checking ignored extended resource",
        new_resource_pod(R(1, 1, scalar={EXT_B: 1})),
        [R(0, 0)],
        args={"ignoredResources": ["example.com/bbb"]},
    ),
    _enough(
        "resources + pod overhead fits",
        new_resource_overhead_pod(new_resource_pod(R(1, 1)), {"cpu": "3m", "memory": "13"}),
        [R(5, 5)],
    ),
    _enough(
        "requests + overhead does not fit for memory",
        new_resource_overhead_pod(new_resource_pod(R(1, 1)), {"cpu": "1m", "memory": "15"}),
        [R(5, 5)],
        unsched(E("memory")),
        [insufficient("memory", 16, 5, 20)],
    ),
    _enough(
        "skip checking ignored extended resource via resource groups",
        new_resource_pod(R(1, 1, scalar={EXT_B: 1, K8S_IO_A: 1})),
        [R(0, 0)],
        unresolvable(E(K8S_IO_A)),
        [insufficient(K8S_IO_A, 1, 0, 0, True)],
        args={"ignoredResourceGroups": ["example.com"]},
    ),
    _enough(
        "skip checking extended resource request with quantity zero via resource groups",
        new_resource_pod(R(1, 1, scalar={EXT_A: 0})),
        [R(0, 0, scalar={EXT_A: 6})],
    ),
    _enough(
        "skip checking resource request with quantity zero",
        new_resource_pod(R(scalar={EXT_A: 1})),
        [R(20, 30, scalar={EXT_A: 1})],
        pod_level=True,
    ),
    _enough(
        "both pod-level and container-level resources fit",
        new_pod_level_resources_pod(new_resource_pod(R(1, 1)), {"cpu": "1m", "memory": "2"}),
        [R(5, 5)],
        pod_level=True,
    ),
    _enough(
        "pod-level cpu resource not fit",
        new_pod_level_resources_pod(new_resource_pod(R(1, 1)), {"cpu": "7m", "memory": "2"}),
        [R(5, 5)],
        unsched(E("cpu")),
        [insufficient("cpu", 7, 5, 10)],
        pod_level=True,
    ),
    _enough(
        "pod-level memory resource not fit",
        new_pod_level_resources_pod(new_resource_pod(R(1, 1)), {"cpu": "3m", "memory": "2"}),
        [R(5, 19)],
        unsched(E("memory")),
        [insufficient("memory", 2, 19, 20)],
        pod_level=True,
    ),
    _enough(
        "pod-level hugepages resource fit",
        new_pod_level_resources_pod(new_resource_pod(), {"cpu": "3m", "memory": "2", HUGE_A: "5"}),
        [],
        pod_level=True,
    ),
    _enough(
        "both pod-level and container-level hugepages resource fit",
        new_pod_level_resources_pod(
            new_resource_pod(R(1, 1, scalar={HUGE_A: 3})), {"cpu": "3m", "memory": "2", HUGE_A: "5"}
        ),
        [],
        pod_level=True,
    ),
    _enough(
        "pod-level hugepages resource not fit",
        new_pod_level_resources_pod(new_resource_pod(), {"cpu": "3m", "memory": "2", HUGE_A: "10"}),
        [],
        unresolvable(E(HUGE_A)),
        [insufficient(HUGE_A, 10, 0, 5, True)],
        pod_level=True,
    ),
    _enough(
        "one pod-level cpu resource fits and all init and non-init containers resources fit",
        new_resource_init_pod(
            new_pod_level_resources_pod(new_resource_pod(R(1, 1)), {"cpu": "3m", "memory": "2"}),
            R(1, 1),
        ),
        [R(5, 19)],
        unsched(E("memory")),
        [insufficient("memory", 2, 19, 20)],
        pod_level=True,
    ),
    # DRAExtendedResource on without a DRA manager (Go: the kubelet path): no delegation, the
    # plugin checks the request itself, as kubesched always does
    _enough(
        "extended resource backed by DRA, nil draManager",
        new_resource_pod(R(1, 1, scalar={EXT_A: 1})),
        [R(0, 0)],
    ),
    _enough(
        "extended resource backed by DRA not enabled",
        new_resource_pod(R(1, 1, scalar={DRA_EXT: 1})),
        [R(0, 0)],
        unresolvable(E(DRA_EXT)),
        [insufficient(DRA_EXT, 1, 0, 0, True)],
    ),
    # no DeviceClass serves example.com/bbb, so DRAExtendedResource changes nothing
    _enough(
        "extended resource NOT backed by DRA",
        new_resource_pod(R(1, 1, scalar={EXT_B: 1})),
        [R(0, 0)],
        unresolvable(E(EXT_B)),
        [insufficient(EXT_B, 1, 0, 0, True)],
    ),
    _enough(
        "extended resource was backed by Device Plugin (Allocatable: 0), global cache",
        new_resource_pod(R(scalar={EXT_A: 1})),
        [R(scalar={EXT_A: 0})],
    ),
]


@pytest.mark.parametrize(
    ("pod", "existing", "args", "pod_level", "want_status", "want_insufficient"), ENOUGH_REQUESTS
)
def test_enough_requests(pod, existing, args, pod_level, want_status, want_insufficient):
    node = raw_node(make_resources(10, 20, 32, 5, 20, 5), make_resources(10, 20, 32, 5, 20, 5))
    ni = node_info(node, *[new_resource_pod(u) for u in existing])
    p = new_fit(args, enable_pod_level_resources=pod_level)
    state = CycleState()
    v = Pod(pod)
    assert p.pre_filter(state, v) is None
    assert_status(p.filter(state, v, ni), want_status)
    request = compute_pod_resource_request(v, pod_level=pod_level)
    got = fits_request(request, ni, p.ignored_resources, p.ignored_resource_groups)
    assert got == want_insufficient


# TestPreFilterDisabled ------------------------------------------------------------------------
def test_pre_filter_disabled():
    """TestPreFilterDisabled: Filter without PreFilter is an error wrapping ErrNotFound."""
    ni = node_info(raw_node(None, None))
    p = new_fit()
    got = p.filter(CycleState(), Pod(new_resource_pod()), ni)
    assert got is not None and got.code is Code.ERROR
    assert got.message == 'error reading "PreFilterNodeResourcesFit" from cycleState: not found'


# TestNotEnoughRequests ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pod", "existing"),
    [
        pytest.param(
            new_resource_pod(),
            R(10, 20),
            id="TestNotEnoughRequests/even without specified resources, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            new_resource_pod(R(1, 1)),
            R(5, 5),
            id="TestNotEnoughRequests/even if both resources fit, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            new_resource_pod(R(5, 1)),
            R(5, 19),
            id="TestNotEnoughRequests/even for equal edge case, predicate fails when there's no space for additional pod",
        ),
        pytest.param(
            new_resource_init_pod(new_resource_pod(R(5, 1)), R(5, 1)),
            R(5, 19),
            id="TestNotEnoughRequests/even for equal edge case, predicate fails when there's no space for additional pod due to init container",
        ),
    ],
)
def test_not_enough_requests(pod, existing):
    node = raw_node({}, make_resources(10, 20, 1, 0, 0, 0))
    ni = node_info(node, new_resource_pod(existing))
    p = new_fit()
    state = CycleState()
    assert p.pre_filter(state, Pod(pod)) is None
    assert_status(p.filter(state, Pod(pod), ni), unsched("Too many pods"))
    assert fits_request(compute_pod_resource_request(Pod(pod)), ni) == [
        InsufficientResource("pods", "Too many pods", 1, 1, 1)
    ]


# TestStorageRequests --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pod", "existing", "want_status"),
    [
        pytest.param(
            new_resource_pod(R(1, 1)),
            R(2, 10),
            None,
            id="TestStorageRequests/empty storage requested, and pod fits",
        ),
        pytest.param(
            new_resource_pod(R(ephemeral=25)),
            R(2, 2),
            unresolvable(E("ephemeral-storage")),
            id="TestStorageRequests/storage ephemeral local storage request exceeds allocatable",
        ),
        pytest.param(
            new_resource_init_pod(new_resource_pod(R(ephemeral=5))),
            R(2, 2, ephemeral=10),
            None,
            id="TestStorageRequests/ephemeral local storage is sufficient",
        ),
        pytest.param(
            new_resource_pod(R(ephemeral=10)), R(2, 2), None, id="TestStorageRequests/pod fits"
        ),
    ],
)
def test_storage_requests(pod, existing, want_status):
    node = raw_node(make_resources(10, 20, 32, 5, 20, 5), make_resources(10, 20, 32, 5, 20, 5))
    ni = node_info(node, new_resource_pod(existing))
    p = new_fit()
    state = CycleState()
    assert p.pre_filter(state, Pod(pod)) is None
    assert_status(p.filter(state, Pod(pod), ni), want_status)


# TestRestartableInitContainers ----------------------------------------------------------------
def _regular_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": ""},
        "spec": {"containers": [{"name": "regular"}]},
    }


def _pod_with_restartable_init(
    request: dict[str, str] | None, sidecar_request: dict[str, str] | None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "regular"}
    if request is not None:
        container["resources"] = {"requests": request}
    sidecar: dict[str, Any] = {"name": "restartable-init", "restartPolicy": "Always"}
    if sidecar_request is not None:
        sidecar["resources"] = {"requests": sidecar_request}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": ""},
        "spec": {"containers": [container], "initContainers": [sidecar]},
    }


@pytest.mark.parametrize(
    ("pod", "enable_sidecar_containers", "want_pre_filter", "want_filter"),
    [
        pytest.param(
            _regular_pod(),
            False,
            None,
            None,
            id="TestRestartableInitContainers/allow pod without restartable init containers if sidecar containers is disabled",
        ),
        pytest.param(
            _pod_with_restartable_init(None, None),
            False,
            unresolvable(
                "Pod has a restartable init container and the SidecarContainers feature is disabled"
            ),
            None,
            id="TestRestartableInitContainers/not allow pod with restartable init containers if sidecar containers is disabled",
        ),
        pytest.param(
            _regular_pod(),
            True,
            None,
            None,
            id="TestRestartableInitContainers/allow pod without restartable init containers if sidecar containers is enabled",
        ),
        pytest.param(
            _pod_with_restartable_init(None, None),
            True,
            None,
            None,
            id="TestRestartableInitContainers/allow pod with restartable init containers if sidecar containers is enabled",
        ),
        pytest.param(
            _pod_with_restartable_init({"cpu": "1m"}, {"cpu": "1m"}),
            True,
            None,
            None,
            id="TestRestartableInitContainers/allow pod if the total requested resources do not exceed the node's allocatable resources",
        ),
        pytest.param(
            _pod_with_restartable_init({"cpu": "1m"}, {"cpu": "2m"}),
            True,
            None,
            unresolvable(E("cpu")),
            id="TestRestartableInitContainers/not allow pod if the total requested resources do exceed the node's allocatable resources",
        ),
    ],
)
def test_restartable_init_containers(pod, enable_sidecar_containers, want_pre_filter, want_filter):
    ni = node_info(raw_node({}, make_resources(2, 0, 1, 0, 0, 0)))
    p = new_fit(enable_sidecar_containers=enable_sidecar_containers)
    state = CycleState()
    got = p.pre_filter(state, Pod(pod))
    assert_status(got, want_pre_filter)
    if got is not None and not got.is_success():
        return
    assert_status(p.filter(state, Pod(pod), ni), want_filter)


# TestFitScore ---------------------------------------------------------------------------------
DEFAULT_RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]


def _nodes(cpu1: str, cpu2: str) -> list[dict[str, Any]]:
    return [
        make_node().name("node1").capacity(cpu=cpu1, memory="10000").obj(),
        make_node().name("node2").capacity(cpu=cpu2, memory="10000").obj(),
    ]


def _existing() -> list[dict[str, Any]]:
    return [
        make_pod().node("node1").req(cpu="2000", memory="4000").obj(),
        make_pod().node("node2").req(cpu="1000", memory="2000").obj(),
    ]


def _existing_sidecar() -> list[dict[str, Any]]:
    return [
        make_pod()
        .node("node1")
        .req(cpu="1000", memory="2000")
        .init_req(cpu="1000", memory="2000", restart_always=True)
        .obj(),
        make_pod().node("node2").req(cpu="1000", memory="2000").obj(),
    ]


def _rtcr(shape: list[tuple[int, int]]) -> dict[str, Any]:
    return {
        "scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "resources": DEFAULT_RESOURCES,
            "requestedToCapacityRatio": {
                "shape": [{"utilization": u, "score": s} for u, s in shape]
            },
        }
    }


def _strategy(t: str) -> dict[str, Any]:
    return {"scoringStrategy": {"type": t, "resources": DEFAULT_RESOURCES}}


def _fit_score(name, pod, nodes, existing, expected, args, run_pre_score):
    return pytest.param(
        pod, nodes, existing, expected, args, run_pre_score, id=f"TestFitScore/{name}"
    )


FIT_SCORE = [
    _fit_score(
        "test case for ScoringStrategy RequestedToCapacityRatio case1",
        make_pod().req(cpu="3000", memory="5000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [10, 32],
        _rtcr([(0, 10), (100, 0)]),
        True,
    ),
    _fit_score(
        "test case for ScoringStrategy RequestedToCapacityRatio case2",
        make_pod().req(cpu="3000", memory="5000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [95, 68],
        _rtcr([(0, 0), (100, 10)]),
        True,
    ),
    _fit_score(
        "test case for ScoringStrategy MostAllocated",
        make_pod().req(cpu="1000", memory="2000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [67, 36],
        _strategy("MostAllocated"),
        True,
    ),
    _fit_score(
        "test case for ScoringStrategy LeastAllocated",
        make_pod().req(cpu="1000", memory="2000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [32, 63],
        _strategy("LeastAllocated"),
        True,
    ),
    _fit_score(
        "test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called",
        make_pod().req(cpu="3000", memory="5000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [10, 32],
        _rtcr([(0, 10), (100, 0)]),
        False,
    ),
    _fit_score(
        "test case for ScoringStrategy MostAllocated if PreScore is not called",
        make_pod().req(cpu="1000", memory="2000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [67, 36],
        _strategy("MostAllocated"),
        False,
    ),
    _fit_score(
        "test case for ScoringStrategy LeastAllocated if PreScore is not called",
        make_pod().req(cpu="1000", memory="2000").obj(),
        _nodes("4000", "6000"),
        _existing(),
        [32, 63],
        _strategy("LeastAllocated"),
        False,
    ),
    _fit_score(
        "test case for ScoringStrategy MostAllocated with sidecar container",
        make_pod().req(cpu="1000", memory="2000").obj(),
        _nodes("4000", "4000"),
        _existing_sidecar(),
        [67, 45],
        _strategy("MostAllocated"),
        True,
    ),
    _fit_score(
        "test case for ScoringStrategy LeastAllocated with sidecar container",
        make_pod().req(cpu="1000", memory="2000").obj(),
        _nodes("4000", "4000"),
        _existing_sidecar(),
        [32, 55],
        _strategy("LeastAllocated"),
        True,
    ),
]


@pytest.mark.parametrize(
    ("pod", "nodes", "existing", "expected", "args", "run_pre_score"), FIT_SCORE
)
def test_fit_score(pod, nodes, existing, expected, args, run_pre_score):
    handle = make_handle(nodes, existing)
    p = new_fit(args, handle)
    state = CycleState()
    v = Pod(pod)
    got = []
    for n in nodes:
        if run_pre_score:
            assert p.pre_score(state, v) is None
        ni = handle.snapshot().get(n["metadata"]["name"])
        got.append(p.score(state, v, ni))
    assert got == expected


def test_fit_score_through_build_plugin():
    """The runtime path: args from a config dict, v1.34 feature defaults."""
    nodes = _nodes("4000", "6000")
    handle = make_handle(nodes, _existing())
    p = build_plugin(Fit, _strategy("MostAllocated"), handle)
    state = CycleState()
    pod = Pod(make_pod().req(cpu="1000", memory="2000").obj())
    assert p.pre_score(state, pod) is None
    assert [p.score(state, pod, ni) for ni in handle.snapshot().list()] == [67, 36]


# TestEventsToRegister -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("features", "expected"),
    [
        pytest.param(
            Features(enable_in_place_pod_vertical_scaling=True, enable_scheduling_queue_hint=False, enable_dra_extended_resource=False),
            [
                ("Pod", ActionType.UPDATE_POD_SCALE_DOWN | ActionType.DELETE),
                (
                    "Node",
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_ALLOCATABLE
                    | ActionType.UPDATE_NODE_TAINT
                    | ActionType.UPDATE_NODE_LABEL,
                ),
            ],
            id="TestEventsToRegister/Register events with InPlacePodVerticalScaling feature enabled",
        ),
        pytest.param(
            Features(enable_in_place_pod_vertical_scaling=False, enable_scheduling_queue_hint=True, enable_dra_extended_resource=False),
            [
                ("Pod", ActionType.DELETE),
                ("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
            ],
            id="TestEventsToRegister/Register events with SchedulingQueueHint feature enabled",
        ),
        pytest.param(
            Features(
                enable_in_place_pod_vertical_scaling=False, enable_scheduling_queue_hint=False, enable_dra_extended_resource=False
            ),
            [
                ("Pod", ActionType.DELETE),
                (
                    "Node",
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_ALLOCATABLE
                    | ActionType.UPDATE_NODE_TAINT
                    | ActionType.UPDATE_NODE_LABEL,
                ),
            ],
            id="TestEventsToRegister/Register events with InPlacePodVerticalScaling feature disabled",
        ),
        pytest.param(
            Features(
                enable_in_place_pod_vertical_scaling=False, enable_scheduling_queue_hint=False, enable_dra_extended_resource=False
            ),
            [
                ("Pod", ActionType.DELETE),
                (
                    "Node",
                    ActionType.ADD
                    | ActionType.UPDATE_NODE_ALLOCATABLE
                    | ActionType.UPDATE_NODE_TAINT
                    | ActionType.UPDATE_NODE_LABEL,
                ),
            ],
            id="TestEventsToRegister/Register events with DRAExtendedResource feature disabled",
        ),
    ],
)
def test_events_to_register(features, expected):
    p = Fit(None, None, features=features)
    events = p.events_to_register()
    assert [(e.event.resource, e.event.action) for e in events] == expected
    assert all(e.hint is not None for e in events)


def test_events_to_register_v1_36_defaults():
    """With the v1.36 gates (InPlacePodVerticalScaling and queueing hints GA, DRAExtendedResource
    beta and on: DeviceClass Add/Update)."""
    p = build_plugin(Fit, None, make_handle())
    assert [(e.event.resource, e.event.action) for e in p.events_to_register()] == [
        ("Pod", ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
        ("Node", ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
        ("DeviceClass", ActionType.ADD | ActionType.UPDATE),
    ]


# Test_isSchedulableAfterPodChange -------------------------------------------------------------
def _pl(w: Any, requests: dict[str, str]) -> dict[str, Any]:
    """st.MakePod()...PodLevelResourceRequests(requests): no containers, pod-level requests."""
    o = bare(w)
    o["spec"]["resources"] = {"requests": dict(requests)}
    return o


POD_CHANGE = [
    ("backoff-wrong-old-object", {}, "not-a-pod", None, True, QUEUE),
    ("backoff-wrong-new-object", {}, None, "not-a-pod", True, QUEUE),
    (
        "queue-on-other-pod-deleted",
        make_pod().name("pod1").req(cpu="1").obj(),
        make_pod().name("pod2").req(cpu="1").node("fake").obj(),
        None,
        True,
        QUEUE,
    ),
    (
        "queue-on-nominated-pod-deleted",
        make_pod().name("pod1").uid("pod1").req(cpu="1").uid("uid0").obj(),
        make_pod().name("pod2").uid("pod2").req(cpu="2").nominated_node_name("fake").uid("uid1").obj(),
        None,
        True,
        QUEUE,
    ),
    ("skip-queue-on-unscheduled-pod-deleted", {}, {}, None, True, SKIP),
    (
        "skip-queue-on-disable-inplace-pod-vertical-scaling",
        make_pod().name("pod1").req(cpu="1").obj(),
        make_pod().name("pod2").req(cpu="2").node("fake").obj(),
        make_pod().name("pod2").req(cpu="1").node("fake").obj(),
        False,
        SKIP,
    ),
    (
        "skip-queue-on-other-unscheduled-pod",
        make_pod().name("pod1").uid("pod1").req(cpu="1").uid("uid0").obj(),
        make_pod().name("pod2").uid("pod2").req(cpu="2").uid("uid1").obj(),
        make_pod().name("pod2").uid("pod2").req(cpu="1").uid("uid1").obj(),
        True,
        SKIP,
    ),
    (
        "skip-queue-on-other-pod-unrelated-resource-scaled-down",
        make_pod().name("pod1").uid("pod1").req(cpu="1").obj(),
        make_pod().name("pod2").uid("pod2").req(memory="2").node("fake").obj(),
        make_pod().name("pod2").uid("pod2").req(memory="1").node("fake").obj(),
        True,
        SKIP,
    ),
    (
        "skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
        _pl(make_pod().name("pod1").uid("pod1"), {"cpu": "1"}),
        _pl(make_pod().name("pod2").uid("pod2").node("fake"), {"memory": "2"}),
        _pl(make_pod().name("pod2").uid("pod2").node("fake"), {"memory": "1"}),
        True,
        SKIP,
    ),
    (
        "queue-on-other-pod-some-resource-scale-down",
        make_pod().name("pod1").uid("pod1").req(cpu="1").obj(),
        make_pod().name("pod2").uid("pod2").req(cpu="2").node("fake").obj(),
        make_pod().name("pod2").uid("pod2").req(cpu="1").node("fake").obj(),
        True,
        QUEUE,
    ),
    (
        "queue-on-other-pod-some-pod-level-resource-scale-down",
        _pl(make_pod().name("pod1").uid("pod1"), {"cpu": "1"}),
        _pl(make_pod().name("pod2").uid("pod2").node("fake"), {"cpu": "2"}),
        _pl(make_pod().name("pod2").uid("pod2").node("fake"), {"cpu": "1"}),
        True,
        QUEUE,
    ),
    (
        "queue-on-target-pod-some-resource-scale-down",
        make_pod().name("pod1").uid("pod1").req(cpu="1").obj(),
        make_pod().name("pod1").uid("pod1").req(cpu="2").obj(),
        make_pod().name("pod1").uid("pod1").req(cpu="1").obj(),
        True,
        QUEUE,
    ),
    (
        "queue-on-target-pod-some-pod-level-resource-scale-down",
        _pl(make_pod().name("pod1").uid("pod1"), {"cpu": "1"}),
        _pl(make_pod().name("pod1").uid("pod1"), {"cpu": "2"}),
        _pl(make_pod().name("pod1").uid("pod1"), {"cpu": "1"}),
        True,
        QUEUE,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "in_place", "expected"),
    [pytest.param(*c[1:], id=f"Test_isSchedulableAfterPodChange/{c[0]}") for c in POD_CHANGE],
)
def test_is_schedulable_after_pod_change(pod, old_obj, new_obj, in_place, expected):
    p = new_fit(enable_in_place_pod_vertical_scaling=in_place)
    assert p.is_schedulable_after_pod_event(Pod(pod), old_obj, new_obj) is expected


def test_is_schedulable_after_pod_change_status_resources():
    """InPlacePodVerticalScaling reads the actuated resources: a pod whose spec was scaled down
    but whose status still reports the old request frees nothing yet (resource.PodRequests with
    UseStatusResources takes the max of spec, status and allocated)."""
    target = Pod(make_pod().name("pod1").uid("pod1").req(cpu="1").obj())
    old = make_pod().name("pod2").uid("pod2").req(cpu="2").node("fake").obj()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1"
    new["status"]["containerStatuses"] = [{"name": "con0", "resources": {"requests": {"cpu": "2"}}}]
    p = new_fit(enable_in_place_pod_vertical_scaling=True)
    assert p.is_schedulable_after_pod_event(target, old, new) is SKIP
    new["status"]["containerStatuses"] = [{"name": "con0", "resources": {"requests": {"cpu": "1"}}}]
    assert p.is_schedulable_after_pod_event(target, old, new) is QUEUE


def _pod_level_resized(cpu_spec: str, cpu_actuated: str | None, infeasible: bool = False) -> dict[str, Any]:
    """A scheduled pod with pod-level requests whose status reports what the kubelet actuated."""
    o = _pl(make_pod().name("pod2").uid("pod2").node("fake"), {"cpu": cpu_spec})
    if cpu_actuated is not None:
        o["status"]["resources"] = {"requests": {"cpu": cpu_actuated}}
    if infeasible:
        o["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return o


def test_is_schedulable_after_pod_change_pod_level_status_resources():
    """v1.36 InPlacePodLevelResourcesVerticalScaling (beta, on): the pod-level requests of a
    resized pod are the max of spec, ``status.resources`` and ``status.allocatedResources``
    (resource.PodRequests' determineEffectiveRequests), so a pod-level scale-down frees nothing
    until the kubelet actuates it; with the gate off the spec alone counts."""
    target = Pod(_pl(make_pod().name("pod1").uid("pod1"), {"cpu": "1"}))
    old = _pod_level_resized("2", "2")
    pending = _pod_level_resized("1", "2")  # spec scaled down, not actuated yet
    actuated = _pod_level_resized("1", "1")
    on = new_fit(
        enable_in_place_pod_vertical_scaling=True,
        enable_in_place_pod_level_resources_vertical_scaling=True,
    )
    assert on.is_schedulable_after_pod_event(target, old, pending) is SKIP
    assert on.is_schedulable_after_pod_event(target, old, actuated) is QUEUE
    off = new_fit(enable_in_place_pod_vertical_scaling=True)
    assert off.is_schedulable_after_pod_event(target, old, pending) is QUEUE
    # an infeasible resize: the spec is left out, the actuated amount counts
    assert on.is_schedulable_after_pod_event(target, _pod_level_resized("1", "2"), _pod_level_resized("3", "1", infeasible=True)) is QUEUE


# Test_isSchedulableAfterNodeChange ------------------------------------------------------------
def _node_cap(rl: dict[str, str]) -> dict[str, Any]:
    return make_node().capacity(rl).obj()


NODE_CHANGE = [
    ("backoff-wrong-new-object", new_resource_pod(), None, "not-a-node", QUEUE),
    ("backoff-wrong-old-object", new_resource_pod(), "not-a-node", raw_node(None, None), QUEUE),
    (
        "skip-queue-on-node-add-without-sufficient-resources",
        new_resource_pod(R(memory=2)),
        None,
        _node_cap({"memory": "1"}),
        SKIP,
    ),
    (
        "skip-queue-on-node-add-without-required-resource-type",
        new_resource_pod(R(scalar={EXT_A: 1})),
        None,
        _node_cap({EXT_B: "1"}),
        SKIP,
    ),
    (
        "queue-on-node-add-with-sufficient-resources",
        new_resource_pod(R(memory=2, scalar={EXT_A: 1})),
        None,
        _node_cap({"memory": "4", EXT_A: "2"}),
        QUEUE,
    ),
    (
        "skip-queue-on-node-unrelated-changes",
        new_resource_pod(R(memory=2, scalar={EXT_A: 1})),
        _node_cap({"memory": "2", EXT_A: "2"}),
        _node_cap({"memory": "2", EXT_A: "1", EXT_B: "2"}),
        SKIP,
    ),
    (
        "queue-on-pod-requested-resources-increase",
        new_resource_pod(R(memory=2, scalar={EXT_A: 1})),
        _node_cap({"memory": "2", EXT_A: "1"}),
        _node_cap({"memory": "2", EXT_A: "2"}),
        QUEUE,
    ),
    (
        "skip-queue-on-node-changes-from-suitable-to-unsuitable",
        new_resource_pod(R(memory=2, scalar={EXT_A: 1})),
        _node_cap({"memory": "4", EXT_A: "2"}),
        _node_cap({"memory": "1", EXT_A: "2"}),
        SKIP,
    ),
    (
        "queue-on-node-changes-from-unsuitable-to-suitable",
        new_resource_pod(R(memory=2, scalar={EXT_A: 1})),
        _node_cap({"memory": "1", EXT_A: "2"}),
        _node_cap({"memory": "4", EXT_A: "2"}),
        QUEUE,
    ),
]


@pytest.mark.parametrize(
    ("pod", "old_obj", "new_obj", "expected"),
    [pytest.param(*c[1:], id=f"Test_isSchedulableAfterNodeChange/{c[0]}") for c in NODE_CHANGE],
)
def test_is_schedulable_after_node_change(pod, old_obj, new_obj, expected):
    p = new_fit()
    assert p.is_schedulable_after_node_change(Pod(pod), old_obj, new_obj) is expected


def test_hints_accept_views_and_dicts():
    """The queue may hand the hints API dicts or SDK views."""
    p = new_fit(enable_in_place_pod_vertical_scaling=True)
    pod = make_pod().name("pod1").req(memory="2").obj()
    node = _node_cap({"memory": "4"})
    assert p.is_schedulable_after_node_change(pod, None, Node(node)) is QUEUE
    assert (
        p.is_schedulable_after_pod_event(Pod(pod), Pod(make_pod().name("x").node("n").obj()), None)
        is QUEUE
    )


# TestIsFit ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pod", "node", "pod_level", "expected"),
    [
        pytest.param(new_resource_pod(), None, False, False, id="TestIsFit/nil node"),
        pytest.param(
            make_pod().req(cpu="2").obj(),
            _node_cap({"cpu": "1"}),
            False,
            False,
            id="TestIsFit/insufficient resource",
        ),
        pytest.param(
            make_pod().req(cpu="1").obj(),
            _node_cap({"cpu": "2"}),
            False,
            True,
            id="TestIsFit/sufficient resource",
        ),
        pytest.param(
            _pl(make_pod(), {"cpu": "2"}),
            _node_cap({"cpu": "1"}),
            True,
            False,
            id="TestIsFit/insufficient pod-level resource",
        ),
        pytest.param(
            _pl(make_pod(), {"cpu": "2"}),
            _node_cap({"cpu": "2"}),
            True,
            True,
            id="TestIsFit/sufficient pod-level resource",
        ),
        pytest.param(
            _pl(make_pod(), {HUGE_A: "2Mi"}),
            _node_cap({HUGE_A: "2Mi"}),
            True,
            True,
            id="TestIsFit/sufficient pod-level resource hugepages",
        ),
        pytest.param(
            _pl(make_pod(), {HUGE_A: "4Mi"}),
            _node_cap({HUGE_A: "2Mi"}),
            True,
            False,
            id="TestIsFit/insufficient pod-level resource hugepages",
        ),
    ],
)
def test_is_fit(pod, node, pod_level, expected):
    assert is_fit(Pod(pod), node, enable_pod_level_resources=pod_level) is expected


# TestHaveAnyRequestedResourcesIncreased -------------------------------------------------------
def _five(pods: str | None, cpu: str, memory: str, eph: str, ext_a: str | None) -> dict[str, Any]:
    rl = {"cpu": cpu, "memory": memory, "ephemeral-storage": eph}
    if pods is not None:
        rl["pods"] = pods
    if ext_a is not None:
        rl[EXT_A] = ext_a
    return _node_cap(rl)


_REQ_ALL = new_resource_pod(R(2, 2, 2, {EXT_A: 2}))

INCREASED = [
    (
        "no-requested-resources",
        new_resource_pod(R()),
        _five("1", "1", "1", "1", "1"),
        _five("1", "2", "2", "2", "2"),
        False,
    ),
    (
        "no-requested-resources-pods-increased",
        new_resource_pod(R()),
        _five("1", "1", "1", "1", "1"),
        _five("2", "1", "1", "1", "1"),
        True,
    ),
    (
        "scalar-resources-not-in-node",
        _REQ_ALL,
        _five(None, "1", "2", "3", None),
        _five(None, "1", "2", "1", None),
        False,
    ),
    (
        "requested-resources-decreased",
        _REQ_ALL,
        _five(None, "1", "2", "3", "4"),
        _five(None, "1", "2", "1", "1"),
        False,
    ),
    (
        "requested-resources-increased",
        _REQ_ALL,
        _five(None, "1", "2", "3", "4"),
        _five(None, "3", "4", "3", "4"),
        True,
    ),
    (
        "non-requested-resources-decreased",
        new_resource_pod(R(2, 2)),
        _five(None, "1", "2", "3", "4"),
        _five(None, "1", "2", "1", "1"),
        False,
    ),
    (
        "non-requested-resources-increased",
        new_resource_pod(R(2, 2)),
        _five(None, "1", "2", "3", "4"),
        _five(None, "1", "2", "5", "6"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("pod", "original", "modified", "expected"),
    [pytest.param(*c[1:], id=f"TestHaveAnyRequestedResourcesIncreased/{c[0]}") for c in INCREASED],
)
def test_have_any_requested_resources_increased(pod, original, modified, expected):
    assert have_any_requested_resources_increased(Pod(pod), original, modified) is expected


# beyond the Go tests: the hot path keeps Go's semantics --------------------------------------
def test_filter_reports_scalars_in_name_order_and_keeps_state_on_clone():
    node = _node_cap({"cpu": "1", "nvidia.com/gpu": "1", "example.com/zzz": "1"})
    ni = node_info(node)
    pod = Pod(make_pod().req({"nvidia.com/gpu": "2", "example.com/zzz": "2", "cpu": "2"}).obj())
    p = build_plugin(Fit, None, make_handle())
    state = CycleState()
    assert p.pre_filter(state, pod) is None
    assert_status(
        p.filter(state.clone(), pod, ni),
        unresolvable(
            "Insufficient cpu", "Insufficient example.com/zzz", "Insufficient nvidia.com/gpu"
        ),
    )
