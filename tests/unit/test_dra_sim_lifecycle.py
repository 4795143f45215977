"""A ResourceClaim's deletion and status writes on the simulated cluster (issue 17, zone H): a
claim with the delete-protection finalizer is only marked when deleted and keeps its devices
while a pod reserves it (Go's resourceclaim controller removes the finalizer once nobody does),
and the API server's validation of ``status`` (``validateResourceClaimStatusUpdate``) rejects
a write, which PreBind turns into an Error for that pod."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.runtime.cli import simulate
from kubesched.runtime.objectstore import ObjectInvalid, ObjectStore
from kubesched.runtime.sim.resourceclaims import ResourceClaimController

R = "resource.k8s.io/v1"
FINALIZER = "resource.kubernetes.io/delete-protection"
UNSCHEDULABLE = (
    "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, "
    "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
)


def _objects(pods: list[tuple[str, str, dict[str, str]]], claims: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """One node with one GPU; ``claims``: name -> annotations; ``pods``: (name, claim, annotations)."""
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
         "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "1000"}, "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "1000"}}},
        {"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": R, "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}},
    ]
    for name, ann in claims.items():
        objs.append({"apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": name, "annotations": ann},
                     "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}})
    for name, claim, ann in pods:
        objs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": ann},
                     "spec": {"resourceClaims": [{"name": "g", "resourceClaimName": claim}],
                              "containers": [{"name": "c", "image": "x", "resources": {"claims": [{"name": "g"}]}}]}})
    return objs


def _run(tmp_path: Path, objs: list[dict[str, Any]]) -> dict[str, Any]:
    f = tmp_path / "cluster.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    return simulate(str(f), seed=1)


def _pods(report: dict[str, Any]) -> dict[str, tuple[str, str | None, str]]:
    return {p["name"]: (p["status"], p["node"], p["message"]) for p in report["pods"]}


def _claims(report: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {c["name"]: (c["status"], c["pods"]) for c in report["claims"]}


# --- deletion with the finalizer --------------------------------------------------------------
def test_deleting_a_reserved_claim_keeps_its_device_from_the_next_pod(tmp_path: Path) -> None:
    # the reviewer's /tmp/rev/s1.yaml: c1 deleted at 10s while p1 runs; p2 (c2) comes at 20s
    objs = _objects([("p1", "c1", {}), ("p2", "c2", {"sim.kubesched.io/arrive-at": "20s"})],
                    {"c1": {"sim.kubesched.io/delete-at": "10s"}, "c2": {}})
    report = _run(tmp_path, objs)
    assert _pods(report) == {"p1": ("Scheduled", "n1", ""), "p2": ("Unschedulable", None, UNSCHEDULABLE)}
    assert _claims(report) == {"c1": ("Allocated", ["p1"]), "c2": ("Pending", [])}


def test_a_deleted_claim_goes_when_its_pod_is_done_and_frees_the_device(tmp_path: Path) -> None:
    objs = _objects([("p1", "c1", {"sim.kubesched.io/run-for": "30s"}), ("p2", "c2", {"sim.kubesched.io/arrive-at": "20s"})],
                    {"c1": {"sim.kubesched.io/delete-at": "10s"}, "c2": {}})
    report = _run(tmp_path, objs)
    pods = _pods(report)
    assert pods["p1"] == ("Completed", "n1", "ran 30s on node n1 (sim.kubesched.io/run-for)")
    assert pods["p2"] == ("Scheduled", "n1", "")
    assert _claims(report) == {"c1": ("Deleted", ["p1"]), "c2": ("Allocated", ["p2"])}


def test_a_pod_of_a_claim_being_deleted_waits_before_the_queue(tmp_path: Path) -> None:
    # PreEnqueue's `resourceclaim "c1" is being deleted` keeps p3 out of the queue (as in Go:
    # no scheduling attempt, no message on the pod), and the claim keeps serving p1
    objs = _objects([("p1", "c1", {}), ("p3", "c1", {"sim.kubesched.io/arrive-at": "20s"})], {"c1": {"sim.kubesched.io/delete-at": "10s"}})
    report = _run(tmp_path, objs)
    assert _pods(report) == {"p1": ("Scheduled", "n1", ""), "p3": ("Pending", None, "")}
    assert _claims(report) == {"c1": ("Allocated", ["p1"])}


def _store() -> ObjectStore:
    store = ObjectStore()
    ctl = ResourceClaimController(store)
    store.subscribe(ctl.on_event)
    return store


def _alloc() -> dict[str, Any]:
    return {"devices": {"results": [{"request": "g", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]}}


def _claim(store: ObjectStore, name: str = "c") -> None:
    store.create({"apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": name, "finalizers": [FINALIZER]}, "spec": {"devices": {"requests": []}}})


def test_an_unreserved_allocated_claim_being_deleted_is_deallocated_and_removed() -> None:
    # Go's syncClaim: deletionTimestamp, the finalizer, no reservation -> allocation and finalizer go
    store = _store()
    _claim(store)
    store.patch(R, "ResourceClaim", "c", {"status": {"allocation": _alloc()}})
    events: list[tuple[str, Any]] = []
    store.subscribe(lambda etype, kind, old, new: events.append((etype, (new or {}).get("status"))))
    store.patch(R, "ResourceClaim", "c", {"metadata": {"deletionTimestamp": "2026-01-01T00:00:10Z"}})
    assert store.peek(R, "ResourceClaim", "c") is None
    # (the controller's writes reach listeners inside the marking's own notification)
    assert ("MODIFIED", {}) in events and ("DELETED", None) in events


def test_a_reserved_claim_being_deleted_stays_until_its_pod_goes() -> None:
    store = _store()
    _claim(store)
    pod = store.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"nodeName": "n1", "resourceClaims": [{"name": "g", "resourceClaimName": "c"}]}})
    ref = {"resource": "pods", "name": "p", "uid": pod["metadata"]["uid"]}
    store.patch(R, "ResourceClaim", "c", {"status": {"allocation": _alloc(), "reservedFor": [ref]}})
    store.patch(R, "ResourceClaim", "c", {"metadata": {"deletionTimestamp": "2026-01-01T00:00:10Z"}})
    claim = store.peek(R, "ResourceClaim", "c")
    assert claim is not None and claim["metadata"]["finalizers"] == [FINALIZER] and claim["status"]["reservedFor"] == [ref]
    store.delete("v1", "Pod", "p")
    assert store.peek(R, "ResourceClaim", "c") is None


# --- status validation --------------------------------------------------------------------------
def _ref(i: int, uid: str | None = None) -> dict[str, str]:
    return {"resource": "pods", "name": f"p{i}", "uid": uid if uid is not None else f"u{i}"}


@pytest.mark.parametrize(
    ("status", "message"),
    [
        ({"allocation": _alloc(), "reservedFor": [_ref(i) for i in range(257)]},
         "status.reservedFor: Too many: 257: must have at most 256 items"),
        ({"allocation": _alloc(), "reservedFor": [_ref(0), _ref(1, "u0")]},
         'status.reservedFor[1]: Duplicate value: "u0"'),
        ({"reservedFor": [_ref(0)]},
         "status.reservedFor: Forbidden: may not be specified when `allocated` is not set"),
        ({"allocation": _alloc(), "reservedFor": [{"resource": "pods", "uid": "u0"}]},
         "status.reservedFor[0].name: Required value"),
        ({"reservedFor": [{"resource": "pods", "name": "p0"}]},
         "[status.reservedFor[0].uid: Required value, status.reservedFor: Forbidden: may not be specified when `allocated` is not set]"),
    ],
)
def test_an_invalid_status_write_is_rejected_with_the_api_servers_message(status: dict[str, Any], message: str) -> None:
    store = _store()
    _claim(store)
    before = store.peek(R, "ResourceClaim", "c")
    with pytest.raises(ObjectInvalid) as e:
        store.patch(R, "ResourceClaim", "c", {"status": status}, subresource="status")
    assert str(e.value) == f'ResourceClaim.resource.k8s.io "c" is invalid: {message}'
    assert store.peek(R, "ResourceClaim", "c") is before  # nothing written


def test_a_set_allocation_does_not_change_and_a_claim_being_deleted_gets_no_new_reservation() -> None:
    store = _store()
    _claim(store)
    store.patch(R, "ResourceClaim", "c", {"status": {"allocation": _alloc(), "reservedFor": [_ref(0)]}})
    other = copy.deepcopy(_alloc())
    other["devices"]["results"][0]["device"] = "gpu-1"
    with pytest.raises(ObjectInvalid) as e:
        store.patch(R, "ResourceClaim", "c", {"status": {"allocation": other}})
    assert str(e.value) == (
        'ResourceClaim.resource.k8s.io "c" is invalid: status.allocation: Invalid value: '
        '{"devices":{"results":[{"request":"g","driver":"gpu.example.com"... (33 more characters): field is immutable'
    )
    store.patch(R, "ResourceClaim", "c", {"metadata": {"deletionTimestamp": "2026-01-01T00:00:10Z"}})
    with pytest.raises(ObjectInvalid) as e:
        store.patch(R, "ResourceClaim", "c", {"status": {"reservedFor": [_ref(0), _ref(1)]}})
    assert str(e.value) == (
        'ResourceClaim.resource.k8s.io "c" is invalid: status.reservedFor: Forbidden: '
        "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"
    )


def test_the_257th_pod_of_a_shared_claim_is_an_error_not_bound(tmp_path: Path) -> None:
    # the reviewer's /tmp/rev/s2.yaml, 257 pods of one claim: PreBind's write is rejected
    objs = _objects([(f"p{i:03}", "shared", {}) for i in range(257)], {"shared": {}})
    report = _run(tmp_path, objs)
    pods = _pods(report)
    assert sum(1 for s, _n, _m in pods.values() if s == "Scheduled") == 256
    assert pods["p256"] == (
        "Error",
        None,
        'running PreBind plugin "DynamicResources": add reservation to claim default/shared: '
        'ResourceClaim.resource.k8s.io "shared" is invalid: status.reservedFor: Too many: 257: must have at most 256 items',
    )
    (claim,) = report["claims"]
    assert claim["status"] == "Allocated" and len(claim["pods"]) == 256


# --- binding conditions on the simulated cluster ----------------------------------------------
def test_binding_conditions_no_driver_meets_end_in_the_timeout_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device with bindingConditions: PreBind's wait cannot be met on the simulated cluster
    (no driver; binding is inline), so it ends in Go's timeout error at once instead of
    sleeping bindingTimeout (10 minutes) of wall time per attempt: it never sleeps."""
    from kubesched.runtime.plugins.dynamicresources import binding

    def no_sleep(_s: float) -> None:
        raise AssertionError("PreBind slept on the simulated cluster")

    monkeypatch.setattr(binding.time, "sleep", no_sleep)
    objs = list(yaml.safe_load_all(_S5))
    report = _run(tmp_path, objs)
    status, node, message = _pods(report)["p1"]
    assert status == "Error"
    assert message == (
        'running PreBind plugin "DynamicResources": device binding timeout: context deadline exceeded'
    )


_S5 = """
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status:
  capacity: {cpu: "16", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, bindingConditions: [attached], bindingFailureConditions: [failed]}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c1}
spec:
  devices:
    requests: [{name: g, exactly: {deviceClassName: gpu}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  resourceClaims: [{name: g, resourceClaimName: c1}]
  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]
"""


# --- the claim made for extended resources a DeviceClass serves (DRAExtendedResource) ---------
def _ext_pod(name: str, annotations: dict[str, str]) -> dict[str, Any]:
    gpu = {"example.com/gpu": "1"}
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1", **gpu}, "limits": gpu}}]},
    }


def test_the_extended_resource_claim_goes_with_its_pod_and_frees_the_device(tmp_path: Path) -> None:
    """Go's resourceclaim controller also cleans up ``status.extendedResourceClaimStatus``'s claim
    (enqueuePod): when pod a completes, its special claim is released and deleted, and pod b,
    waiting for the node's only GPU, gets it."""
    driver = "gpu.example.com"
    objs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
         "status": {"capacity": {"cpu": "16", "memory": "64Gi", "pods": "100"},
                    "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "100"}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": driver},
         "spec": {"extendedResourceName": "example.com/gpu",
                  "selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": driver, "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}},
        _ext_pod("a", {"sim.kubesched.io/run-for": "10s"}),
        _ext_pod("b", {"sim.kubesched.io/arrive-at": "5s"}),
    ]
    report = _run(tmp_path, objs)
    pods = _pods(report)
    assert pods["a"][:2] == ("Completed", "n1")
    assert pods["b"][:2] == ("Scheduled", "n1")
    claims = {c["name"].rsplit("-", 1)[0]: (c["status"], c["pods"]) for c in report["claims"]}
    assert claims == {"a-extended-resources": ("Deleted", ["a"]), "b-extended-resources": ("Allocated", ["b"])}
