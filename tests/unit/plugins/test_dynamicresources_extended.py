"""Extended resources backed by DRA: the request and mapping builder, transcribed from
kube-scheduler v1.36.3's ``dynamicresources/extendeddynamicresources_test.go``
(``Test_createRequestsAndMappings_requests`` and ``Test_createRequestsAndMappings_mappings``,
ids ``Go<TestName>/<case>``), and the other pieces of ``extended.py`` with Go's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.dra.deviceclasses import ExtendedResourceCache
from kubesched.runtime.objectstore import ObjectStore
from kubesched.runtime.plugins.dynamicresources.extended import (
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    RESOURCE_CLAIM_FINALIZER,
    SPECIAL_CLAIM_IN_MEM_NAME,
    ExtendedResources,
    NodeExtendedClaim,
    create_extended_resource_claim_in_api,
    create_requests_and_mappings,
    delete_claim,
    filter_extended_resources,
    find_extended_resource_claim,
    has_device_class_mapped_extended_resource,
    is_special_claim_name,
    partition_container_indices,
    patch_pod_extended_resource_claim_status,
    pre_filter_extended_resources,
    unreserve_extended_resource_claim,
)
from kubesched.sdk import Code, Pod

POD_NAME = "my-pod"
POD_UID = "1234"
NAMESPACE = "default"
ERN = "example.com/gpu"  # dynamicresources_test.go extendedResourceName
PREFIX = "deviceclass.resource.kubernetes.io/"


class PodBuilder:
    """st.MakePod(): Res adds container con<i>, InitReq init-con<i>, SidecarReq sidecar-con<i>
    (an init container with restartPolicy Always)."""

    def __init__(self) -> None:
        self.containers: list[dict[str, Any]] = []
        self.init: list[dict[str, Any]] = []

    def res(self, reqs: dict[str, str]) -> PodBuilder:
        self.containers.append({"name": f"con{len(self.containers)}", "resources": {"requests": dict(reqs)}})
        return self

    def init_req(self, reqs: dict[str, str]) -> PodBuilder:
        self.init.append({"name": f"init-con{len(self.init)}", "resources": {"requests": dict(reqs)}})
        return self

    def sidecar_req(self, reqs: dict[str, str]) -> PodBuilder:
        self.init.append(
            {"name": f"sidecar-con{len(self.init)}", "restartPolicy": "Always", "resources": {"requests": dict(reqs)}}
        )
        return self

    def obj(self) -> Pod:
        spec: dict[str, Any] = {"containers": self.containers}
        if self.init:
            spec["initContainers"] = self.init
        return Pod({"metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID}, "spec": spec})


class MockResolver:
    """mockDeviceClassResolver."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = {k: {"metadata": {"name": v}} for k, v in mapping.items()}

    def get_device_class(self, name: str) -> dict[str, Any] | None:
        return self.mapping.get(name)


def req(name: str, cls: str, count: int) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": cls, "allocationMode": "ExactCount", "count": count}}


def cer(container: str, resource: str, request: str) -> dict[str, str]:
    return {"containerName": container, "resourceName": resource, "requestName": request}


def _pods() -> dict[str, Pod]:
    return {
        "pod1": PodBuilder().res({ERN: "1", ERN + "1": "2"}).obj(),
        "pod2": PodBuilder().res({ERN: "1"}).res({ERN + "1": "2"}).obj(),
        "podInit": PodBuilder().res({ERN: "1"}).init_req({ERN + "init": "2"}).obj(),
        "podInit2": PodBuilder().res({ERN: "1"}).init_req({ERN + "init": "1"}).init_req({ERN + "init": "2"}).obj(),
        "podInit3": PodBuilder()
        .res({ERN: "1"})
        .init_req({ERN + "init": "1"})
        .sidecar_req({ERN + "init": "1"})
        .init_req({ERN + "init": "2"})
        .obj(),
        "pod1InitImplicit": PodBuilder().init_req({ERN + "init": "1", PREFIX + "classInit": "2"}).obj(),
        "podInitImplicit": PodBuilder()
        .res({ERN: "1"})
        .init_req({ERN + "init": "1"})
        .init_req({PREFIX + "classInit": "2"})
        .obj(),
    }


RES = {ERN: 1}
RES2 = {ERN: 1, ERN + "1": 2}
RES_INIT = {ERN: 1, ERN + "init": 2}
RES_INIT_IMPLICIT = {ERN: 1, ERN + "init": 2, PREFIX + "classInit": 2}
DEV_MAP = {ERN: "class"}
DEV_MAP2 = {ERN: "class", ERN + "1": "class1"}
DEV_MAP_INIT = {ERN: "class", ERN + "init": "classInit"}
DEV_MAP_INIT_IMPLICIT = {ERN: "class", ERN + "init": "classInit", PREFIX + "classInit": "classInit"}

DEV_REQ = req("container-0-request-0", "class", 1)
DEV_REQ2 = req("container-0-request-1", "class1", 2)
DEV_REQ3 = req("container-1-request-0", "class1", 2)
DEV_REQ_INIT = req("container-1-request-0", "class", 1)
DEV_REQ_SIDECAR = req("container-1-request-0", "classInit", 1)
DEV_REQ2_INIT = req("container-1-request-0", "classInit", 2)
DEV_REQ6_INIT = req("container-0-request-0", "classInit", 2)
DEV_REQ3_INIT = req("container-2-request-0", "class", 1)
DEV_REQ4_INIT = req("container-3-request-0", "class", 1)
DEV_REQ5_INIT = req("container-2-request-0", "classInit", 2)

REQUEST_CASES = [
    ("nil", "pod1", None, None, []),
    ("one resource match", "pod1", RES, DEV_MAP, [DEV_REQ]),
    ("one resource match, one resource not match", "pod1", RES2, DEV_MAP, [DEV_REQ]),
    ("two resources match", "pod1", RES2, DEV_MAP2, [DEV_REQ, DEV_REQ2]),
    ("two containers match", "pod2", RES2, DEV_MAP2, [DEV_REQ, DEV_REQ3]),
    ("one init container, one regular container", "podInit", RES_INIT, DEV_MAP_INIT, [DEV_REQ6_INIT, DEV_REQ_INIT]),
    ("two init containers, one regular container", "podInit2", RES_INIT, DEV_MAP_INIT, [DEV_REQ2_INIT, DEV_REQ3_INIT]),
    (
        "three init containers, one sidecar, one regular container",
        "podInit3",
        RES_INIT,
        DEV_MAP_INIT,
        [DEV_REQ_SIDECAR, DEV_REQ5_INIT, DEV_REQ4_INIT],
    ),
]


@pytest.mark.parametrize(
    ("pod", "extended", "mapping", "want"),
    [pytest.param(*c[1:], id=f"GoTest_createRequestsAndMappings_requests/{c[0]}") for c in REQUEST_CASES],
)
def test_create_requests(pod: str, extended: dict[str, int] | None, mapping: dict[str, str] | None, want: list[Any]) -> None:
    got, _ = create_requests_and_mappings(_pods()[pod], extended or {}, MockResolver(mapping or {}))
    assert got == want


CER = cer("con0", ERN, "container-0-request-0")
CER1 = cer("con0", ERN + "1", "container-0-request-1")
CER2 = cer("con1", ERN + "1", "container-1-request-0")
CER3 = cer("con0", ERN, "container-1-request-0")
CER4 = cer("con0", ERN, "container-2-request-0")
CER5 = cer("con0", ERN, "container-3-request-0")
CER_INIT = cer("init-con0", ERN + "init", "container-1-request-0")
CER_INIT0 = cer("init-con0", ERN + "init", "container-0-request-0")
CER_INIT1 = cer("init-con0", ERN + "init", "container-1-request-0")
CER_INIT2 = cer("init-con1", ERN + "init", "container-1-request-0")
CER_INIT3 = cer("init-con2", ERN + "init", "container-2-request-0")
CER_SIDECAR = cer("sidecar-con1", ERN + "init", "container-1-request-0")
CER_INIT_IMPLICIT = cer("init-con0", ERN + "init", "container-0-request-0")
CER_INIT4_IMPLICIT = cer("init-con0", ERN + "init", "container-0-request-1")
CER_INIT2_IMPLICIT = cer("init-con1", PREFIX + "classInit", "container-1-request-0")
CER_INIT3_IMPLICIT = cer("init-con0", PREFIX + "classInit", "container-0-request-0")

MAPPING_CASES = [
    ("one container, two requests", "pod1", RES2, DEV_MAP2, [CER, CER1]),
    (
        "one container, one explicit and one implicit request",
        "pod1InitImplicit",
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT_IMPLICIT,
        [CER_INIT3_IMPLICIT, CER_INIT4_IMPLICIT],
    ),
    ("two containers, two requests", "pod2", RES2, DEV_MAP2, [CER, CER2]),
    ("one init container, one regular container, one request", "podInit", RES_INIT, DEV_MAP_INIT, [CER_INIT0, CER3]),
    ("three containers (two are init container), two requests", "podInit2", RES_INIT, DEV_MAP_INIT, [CER_INIT, CER_INIT2, CER4]),
    (
        "three containers (two are init container), both explicit and implicit resources",
        "podInitImplicit",
        RES_INIT_IMPLICIT,
        DEV_MAP_INIT_IMPLICIT,
        [CER_INIT_IMPLICIT, CER_INIT2_IMPLICIT, CER4],
    ),
    (
        "four containers (two are init container, one sidecar), three requests",
        "podInit3",
        RES_INIT,
        DEV_MAP_INIT,
        [CER_INIT1, CER_SIDECAR, CER_INIT3, CER5],
    ),
]


@pytest.mark.parametrize(
    ("pod", "extended", "mapping", "want"),
    [pytest.param(*c[1:], id=f"GoTest_createRequestsAndMappings_mappings/{c[0]}") for c in MAPPING_CASES],
)
def test_create_mappings(pod: str, extended: dict[str, int], mapping: dict[str, str], want: list[Any]) -> None:
    _, got = create_requests_and_mappings(_pods()[pod], extended, MockResolver(mapping))
    # Go sorts the mappings by request name, then container name, before comparing
    got.sort(key=lambda m: (m["requestName"], m["containerName"]))
    assert got == want


# the rest of extendeddynamicresources.go -------------------------------------------------------


def test_partition_container_indices() -> None:
    containers = [{"name": "i0"}, {"name": "s1", "restartPolicy": "Always"}, {"name": "i2"}, {"name": "c3"}]
    assert partition_container_indices(containers, 3) == ([1, 3], [0, 2])


def test_is_special_claim_name() -> None:
    assert is_special_claim_name("<extended-resources>")
    assert not is_special_claim_name("my-pod-extended-resources-abcde")


def test_has_device_class_mapped_extended_resource() -> None:
    r = MockResolver({ERN: "class"})
    assert has_device_class_mapped_extended_resource({ERN: 1, "cpu": 1}, r)
    assert not has_device_class_mapped_extended_resource({ERN: 0}, r)  # zero requests do not count
    assert not has_device_class_mapped_extended_resource({"example.com/other": 1}, r)


def _owned_claim(name: str, *, uid: str = POD_UID, controller: Any = True, annotated: bool = True) -> dict[str, Any]:
    md: dict[str, Any] = {
        "name": name,
        "namespace": NAMESPACE,
        "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": uid, "controller": controller}],
    }
    if annotated:
        md["annotations"] = {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": md, "spec": {}}


def test_find_extended_resource_claim() -> None:
    pod = PodBuilder().res({ERN: "1"}).obj()
    good = _owned_claim("good")
    others = [_owned_claim("a", annotated=False), _owned_claim("b", uid="other"), _owned_claim("c", controller=False)]
    assert find_extended_resource_claim(pod, others) is None
    assert find_extended_resource_claim(pod, [*others, good]) is good


def test_pre_filter_builds_in_memory_claim() -> None:
    pod = PodBuilder().res({ERN: "2", "cpu": "1"}).obj()
    ext, status = pre_filter_extended_resources(pod, MockResolver({ERN: "class"}), list, new_uid=lambda: "tmp-uid")
    assert status is None and ext is not None
    assert ext.pod_scalar_resources == {ERN: 2}
    assert ext.claim == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": NAMESPACE,
            "name": SPECIAL_CLAIM_IN_MEM_NAME,
            "uid": "tmp-uid",
            "generateName": "my-pod-extended-resources-",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID, "controller": True}],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {},
    }


def test_pre_filter_finds_claim_of_an_earlier_cycle_and_reports_list_errors() -> None:
    pod = PodBuilder().res({ERN: "1"}).obj()
    resolver = MockResolver({ERN: "class"})
    ext, status = pre_filter_extended_resources(pod, resolver, lambda: [_owned_claim("my-pod-extended-resources-x")])
    assert status is None and ext is not None
    assert ext.claim["metadata"]["name"] == "my-pod-extended-resources-x"

    def broken() -> list[Any]:
        raise RuntimeError("listing failed")

    ext, status = pre_filter_extended_resources(pod, resolver, broken)
    assert ext is None and status is not None
    assert (status.code, status.message) == (Code.ERROR, "listing failed")
    # no DeviceClass serves the pod's resources: nothing to do
    assert pre_filter_extended_resources(pod, MockResolver({}), broken) == (None, None)


def _ext(pod: Pod, claim: dict[str, Any] | None = None) -> ExtendedResources:
    ext, _ = pre_filter_extended_resources(pod, MockResolver({ERN: "class"}), lambda: [], new_uid=lambda: "tmp")
    assert ext is not None
    if claim is not None:
        ext.claim = claim
    return ext


def test_filter_extended_resources() -> None:
    pod = PodBuilder().res({ERN: "2"}).obj()
    resolver = MockResolver({ERN: "class"})
    # the node lists the resource (a device plugin serves it): nothing for DRA
    assert filter_extended_resources(_ext(pod), True, pod, {ERN: 4}, resolver) == (None, None)
    # the node does not list it: the node's copy of the claim asks for the devices
    node_claim, status = filter_extended_resources(_ext(pod), True, pod, {}, resolver)
    assert status is None and node_claim is not None
    assert node_claim.claim["spec"] == {"devices": {"requests": [req("container-0-request-0", "class", 2)]}}
    assert node_claim.mappings == [cer("con0", ERN, "container-0-request-0")]
    # allocatable 0 counts as not served by a device plugin
    node_claim, status = filter_extended_resources(_ext(pod), True, pod, {ERN: 0}, resolver)
    assert status is None and node_claim is not None
    # a claim of an earlier cycle with requests is stale
    stale = _owned_claim("old")
    stale["spec"] = {"devices": {"requests": [req("container-0-request-0", "class", 2)]}}
    node_claim, status = filter_extended_resources(_ext(pod, stale), True, pod, {}, resolver)
    assert node_claim is None and status is not None
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot schedule extended resource claim")


def test_filter_extended_resources_cannot_fit() -> None:
    pod = PodBuilder().res({ERN: "1", "example.com/other": "1"}).obj()
    _, status = filter_extended_resources(_ext(pod), True, pod, {}, MockResolver({ERN: "class"}))
    assert status is not None
    assert (status.code, status.message) == (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cannot fit resource")


def test_filter_extended_resources_with_user_claims_keeps_an_empty_claim() -> None:
    pod = PodBuilder().res({ERN: "1"}).obj()
    node_claim, status = filter_extended_resources(_ext(pod), False, pod, {ERN: 1}, MockResolver({ERN: "class"}))
    assert status is None and node_claim is not None
    assert node_claim.claim["spec"] == {"devices": {}} and node_claim.mappings == []


def _store_with_pod() -> ObjectStore:
    s = ObjectStore()
    s.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID}})
    return s


def test_create_claim_in_api_and_patch_pod_status() -> None:
    s = _store_with_pod()
    pod = PodBuilder().res({ERN: "1"}).obj()
    node_claim, _ = filter_extended_resources(_ext(pod), True, pod, {}, MockResolver({ERN: "class"}))
    with pytest.raises(RuntimeError) as e:
        create_extended_resource_claim_in_api(s, "node-1", None)
    assert str(e.value) == "extended resource claim not found for node node-1"
    created = create_extended_resource_claim_in_api(s, "node-1", node_claim)
    name = created["metadata"]["name"]
    assert name.startswith("my-pod-extended-resources-") and len(name) == len("my-pod-extended-resources-") + 5
    assert created["metadata"]["uid"] != "tmp"
    assert s.get("resource.k8s.io/v1", "ResourceClaim", name, NAMESPACE)["spec"] == node_claim.claim["spec"]

    with pytest.raises(RuntimeError) as e:
        patch_pod_extended_resource_claim_status(s, pod, name, [])
    assert str(e.value) == (
        "nil or empty request mappings, no update of pod default/my-pod ExtendedResourceClaimStatus"
    )
    patch_pod_extended_resource_claim_status(s, pod, name, node_claim.mappings)
    assert s.get("v1", "Pod", POD_NAME, NAMESPACE)["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [cer("con0", ERN, "container-0-request-0")],
        "resourceClaimName": name,
    }


def test_create_claim_in_api_error_and_pod_patch_error() -> None:
    class Failing:
        def create(self, obj: Any) -> dict[str, Any]:
            raise RuntimeError("the server is down")

        def patch(self, *a: Any, **k: Any) -> dict[str, Any]:
            raise RuntimeError('Pod "my-pod" not found')

    pod = PodBuilder().res({ERN: "1"}).obj()
    node_claim = NodeExtendedClaim(_ext(pod).claim, [cer("con0", ERN, "container-0-request-0")])
    with pytest.raises(RuntimeError) as e:
        create_extended_resource_claim_in_api(Failing(), "n", node_claim)
    assert str(e.value) == "create claim for extended resources default/: the server is down"
    with pytest.raises(RuntimeError) as e:
        patch_pod_extended_resource_claim_status(Failing(), pod, "c", node_claim.mappings)
    assert str(e.value) == 'update pod default/my-pod ExtendedResourceClaimStatus: Pod "my-pod" not found'


def test_delete_claim_removes_the_finalizer_first() -> None:
    s = ObjectStore()
    claim = _owned_claim("c1")
    claim["metadata"]["finalizers"] = ["other", RESOURCE_CLAIM_FINALIZER]
    stored = s.create(claim)
    seen: list[tuple[str, Any]] = []
    s.subscribe(lambda etype, kind, old, new: seen.append((etype, (new or old)["metadata"].get("finalizers"))))
    # a stale copy: the first write conflicts, the retry reads the claim again
    s.patch("resource.k8s.io/v1", "ResourceClaim", "c1", {"metadata": {"labels": {"x": "y"}}}, NAMESPACE)
    delete_claim(s, stored)
    assert seen == [("MODIFIED", ["other", RESOURCE_CLAIM_FINALIZER]), ("MODIFIED", ["other"]), ("DELETED", ["other"])]


def test_unreserve_extended_resource_claim() -> None:
    s = ObjectStore()
    calls: list[str] = []
    in_memory = _owned_claim(SPECIAL_CLAIM_IN_MEM_NAME)
    unreserve_extended_resource_claim(s, in_memory, lambda: calls.append("remove") or True, lambda: calls.append("restore"))
    assert calls == ["remove", "restore"]
    created = s.create(_owned_claim("written"))
    calls.clear()
    unreserve_extended_resource_claim(s, created, lambda: calls.append("remove") is None and False, lambda: calls.append("restore"))
    assert calls == ["remove"]
    assert s.peek("resource.k8s.io/v1", "ResourceClaim", "written", NAMESPACE) is None
    unreserve_extended_resource_claim(s, None, lambda: pytest.fail("no claim"), lambda: None)


def test_cache_serves_the_builder() -> None:
    """create_requests_and_mappings with the real ExtendedResourceCache (explicit and implicit)."""
    cache = ExtendedResourceCache()
    cache.on_add({"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": ERN}})
    pod = PodBuilder().res({ERN: "1", PREFIX + "gpu": "1"}).obj()
    reqs, _ = create_requests_and_mappings(pod, {ERN: 1, PREFIX + "gpu": 1}, cache)
    assert reqs == [req("container-0-request-0", "gpu", 1), req("container-0-request-1", "gpu", 1)]
