"""Pod effective requests, transcribed from kubernetes/kubernetes
staging/src/k8s.io/component-helpers/resource/helpers_test.go (TestPodRequestsAndLimits,
TestPodRequestsAndLimitsWithoutOverhead, TestPodResourceRequests; the restartable init container
cases of TestPodResourceLimits applied to requests, which aggregate the same way) and
kube-scheduler's non-zero request defaults (100m CPU, 200Mi memory)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sdk import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    InvalidObjectError,
    Node,
    NodeInfo,
    Pod,
)

Mi = 1024 * 1024
Gi = 1024 * Mi


def c(
    cpu: str | None = None,
    memory: str | None = None,
    *,
    limits: dict | None = None,
    always: bool = False,
    **extra: str,
) -> dict[str, Any]:
    req = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    req.update({k.replace("_", "/"): v for k, v in extra.items()})
    res: dict[str, Any] = {}
    if req:
        res["requests"] = req
    if limits:
        res["limits"] = limits
    out: dict[str, Any] = {"name": "c", "image": "x", "resources": res}
    if always:
        out["restartPolicy"] = "Always"
    return out


def pod(containers: list, init: list | None = None, overhead: dict | None = None) -> Pod:
    spec: dict[str, Any] = {"containers": containers}
    if init:
        spec["initContainers"] = init
    if overhead:
        spec["overhead"] = overhead
    return Pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "uid": "p"},
            "spec": spec,
        }
    )


def req(p: Pod) -> tuple[int, int]:
    return p.requests.milli_cpu, p.requests.memory


# TestPodRequestsAndLimits ---------------------------------------------------------------------------


def test_just_overhead():
    assert req(pod([c()], overhead={"cpu": "5", "memory": "5"})) == (5000, 5)


def test_req_and_overhead():
    assert req(pod([c("1", "10")], overhead={"cpu": "5", "memory": "5"})) == (6000, 15)


def test_all_req_lim_and_overhead():
    p = pod(
        [c("1", "10", limits={"cpu": "2", "memory": "12"})], overhead={"cpu": "5", "memory": "5"}
    )
    assert req(p) == (6000, 15)


# TestPodRequestsAndLimitsWithoutOverhead (with overhead added, as the scheduler uses it) --------------


def test_two_containers_sum():
    p = pod(
        [
            c("1", "5", limits={"cpu": "2", "memory": "10"}),
            c("4", "12", limits={"cpu": "8", "memory": "24"}),
        ]
    )
    assert req(p) == (5000, 17)


def test_two_containers_with_overhead():
    p = pod([c("1", "5"), c("4", "12")], overhead={"cpu": "3", "memory": "8"})
    assert req(p) == (5000 + 3000, 17 + 8)


def test_massive_init_container_is_the_max():
    p = pod([c("1", "5"), c("4", "12")], init=[c("1", "5"), c("40", "120")])
    assert req(p) == (40000, 120)
    p = pod(
        [c("1", "5"), c("4", "12")],
        init=[c("1", "5"), c("40", "120")],
        overhead={"cpu": "3", "memory": "8"},
    )
    assert req(p) == (43000, 128)


# TestPodResourceRequests --------------------------------------------------------------------------------


def test_larger_init_container():
    assert pod([c("1")], init=[c("4")]).requests.milli_cpu == 4000


def test_larger_containers():
    assert pod([c("2"), c("3")], init=[c("2")]).requests.milli_cpu == 5000


def test_pod_overhead_included():
    p = pod(
        [c("2"), c("3")], init=[c("2", limits={"cpu": "2"})], overhead={"cpu": "1", "memory": "1Gi"}
    )
    assert req(p) == (6000, Gi)


# restartable init containers (sidecars) ------------------------------------------------------------------


def test_restartable_init_container_adds_to_containers():
    assert pod([c("1")], init=[c("1", always=True)]).requests.milli_cpu == 2000


def test_multiple_restartable_init_containers():
    # max(5, restartable init containers (3+2+1) + regular (1)) = 7
    p = pod([c("1")], init=[c("5"), c("1", always=True), c("2", always=True), c("3", always=True)])
    assert p.requests.milli_cpu == 7000


def test_multiple_restartable_and_regular_init_containers():
    # init-2 requires 5 + the restartable init containers started before it (1+2) = 8
    p = pod(
        [c("1")],
        init=[c("5"), c("1", always=True), c("2", always=True), c("5"), c("3", always=True)],
    )
    assert p.requests.milli_cpu == 8000


def test_restartable_init_init_and_regular():
    p = pod([c("100")], init=[c("10", always=True), c("200")])
    assert p.requests.milli_cpu == 210000


# limits as requests --------------------------------------------------------------------------------------


def test_limits_used_as_requests_when_requests_absent():
    p = pod([c(limits={"cpu": "2", "memory": "1Gi"})])
    assert req(p) == (2000, Gi)


def test_requests_win_over_limits():
    p = pod([c("1", limits={"cpu": "2", "memory": "1Gi"})])
    assert req(p) == (1000, Gi)


def test_scalar_and_ephemeral_resources():
    p = pod(
        [
            c("1", **{"nvidia.com_gpu": "2", "ephemeral-storage": "1Gi"}),
            c(**{"nvidia.com_gpu": "1"}),
        ]
    )
    assert p.requests.scalar == {"nvidia.com/gpu": 3}
    assert p.requests.ephemeral_storage == Gi


# non-zero requests (scoring) -------------------------------------------------------------------------------


def test_non_zero_defaults_for_missing_requests():
    assert DEFAULT_MILLI_CPU_REQUEST == 100
    assert DEFAULT_MEMORY_REQUEST == 200 * Mi
    assert pod([c()]).non_zero_requests == (100, 200 * Mi)
    assert pod([c()]).requests.milli_cpu == 0


def test_non_zero_defaults_per_container():
    assert pod([c("500m"), c()]).non_zero_requests == (600, 400 * Mi)


def test_non_zero_keeps_explicit_zero():
    assert pod([c("0", "1Gi")]).non_zero_requests == (0, Gi)


def test_non_zero_with_init_container():
    # containers: 100m (default); init: 300m -> max
    assert pod([c()], init=[c("300m")]).non_zero_requests == (300, 200 * Mi)


# node info totals ---------------------------------------------------------------------------------------


def _node(cpu: str = "4", memory: str = "8Gi") -> Node:
    return Node(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": "n1"},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
        }
    )


def test_node_info_running_totals():
    p1 = Pod({**pod([c("1", "1Gi")]).raw, "metadata": {"name": "a", "namespace": "d", "uid": "a"}})
    p2 = Pod({**pod([c()]).raw, "metadata": {"name": "b", "namespace": "d", "uid": "b"}})
    ni = NodeInfo(_node(), [p1])
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1000, Gi)
    assert ni.allocatable.milli_cpu == 4000
    ni.add_pod(p2)
    assert (ni.requested.milli_cpu, ni.requested.memory) == (1000, Gi)
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == (1100, Gi + 200 * Mi)
    clone = ni.clone()
    ni.remove_pod(p1)
    assert (ni.requested.milli_cpu, ni.requested.memory) == (0, 0)
    assert (ni.non_zero_requested.milli_cpu, ni.non_zero_requested.memory) == (100, 200 * Mi)
    assert clone.requested.milli_cpu == 1000  # the clone is independent
    with pytest.raises(KeyError):
        ni.remove_pod(p1)


# validation ---------------------------------------------------------------------------------------------


def test_invalid_request_names_the_field():
    with pytest.raises(InvalidObjectError) as ei:
        pod([c("1"), c("12x")]).validate()
    assert ei.value.field == "spec.containers[1].resources.requests.cpu"


def test_invalid_init_container_request_names_the_field():
    with pytest.raises(InvalidObjectError) as ei:
        pod([c("1")], init=[c(memory="1.2.3")]).validate()
    assert ei.value.field == "spec.initContainers[0].resources.requests.memory"


def test_invalid_limit_names_the_limits_field():
    with pytest.raises(InvalidObjectError) as ei:
        pod([c(limits={"memory": "1.2.3Gi"})]).validate()
    assert ei.value.field == "spec.containers[0].resources.limits.memory"


def test_invalid_overhead_names_the_field():
    with pytest.raises(InvalidObjectError) as ei:
        pod([c("1")], overhead={"cpu": "abc"}).validate()
    assert ei.value.field == "spec.overhead.cpu"


# one implementation of resource.PodRequests ------------------------------------------------------------


def test_pod_level_requests_override_supported_resources_including_hugepages():
    p = Pod({**pod([c("1", "1Gi", **{"hugepages-2Mi": "2Mi"})]).raw})
    raw = {**p.raw, "spec": {**p.raw["spec"], "resources": {"requests": {"cpu": "2", "hugepages-2Mi": "4Mi", "nvidia.com/gpu": "1"}}}}
    q = Pod(raw)
    assert (q.requests.milli_cpu, q.requests.memory) == (2000, Gi)
    assert q.requests.scalar == {"hugepages-2Mi": 4 * Mi}  # not a pod-level resource: gpu ignored


def test_pod_requests_and_the_noderesources_plugins_share_one_implementation():
    from kubesched.runtime.plugins.noderesources import pod_requests as plugin_requests
    from kubesched.sdk.objects import requests

    assert plugin_requests.pod_requests is requests.pod_requests
    p = pod([c("500m"), c()], init=[c("300m", always=True)])
    assert p.non_zero_requests == (900, 600 * Mi)  # two containers and a sidecar, defaults filled
    assert requests.quantity_value(requests.pod_requests(p, non_missing=True), "cpu") == 900


def test_a_request_list_that_is_not_a_map_names_the_field():
    raw = pod([c("1")]).raw
    bad = {**raw, "spec": {**raw["spec"], "containers": [{"name": "c", "resources": {"requests": ["cpu"]}}]}}
    with pytest.raises(InvalidObjectError) as ei:
        Pod(bad).validate()
    assert ei.value.field == "spec.containers[0].resources.requests"
    assert "must be a map of resource quantities" in str(ei.value)
