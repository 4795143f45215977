"""Dynamic resource allocation on the clusters (zone D of issue 17): the resource.k8s.io/v1 kinds
(manifests, discovery, EventResource), the simulated cluster's resourceclaim controller
(sim/resourceclaims.py, as kube-controller-manager's pkg/controller/resourceclaim), DRA objects
reaching the scheduler's queueing hints, and the claims in ``kubesched simulate``'s report."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from kubesched.runtime.cli import main, simulate
from kubesched.runtime.cluster.kubernetes import BUILTIN_RESOURCES
from kubesched.runtime.cluster.manifests import ManifestError, load_manifests
from kubesched.runtime.objectstore import ObjectStore
from kubesched.runtime.sim.resourceclaims import (
    ResourceClaimController,
    claim_row,
    generate_name,
    uses_claims,
)
from kubesched.sdk import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    Status,
    hookimpl,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "dra" / "cluster.yaml"
R = "resource.k8s.io/v1"
FINALIZER = "resource.kubernetes.io/delete-protection"

#: the default profile without DynamicResources: the controller, the loading and the report
#: do not depend on the plugin
NO_DRA_PLUGIN = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "DynamicResources"}]}}}],
}


# --- kinds --------------------------------------------------------------------------------------
def test_event_resources_name_the_dra_kinds() -> None:
    assert EventResource.RESOURCE_CLAIM.value == "ResourceClaim"
    assert EventResource.RESOURCE_CLAIM_TEMPLATE.value == "ResourceClaimTemplate"
    assert EventResource.RESOURCE_SLICE.value == "ResourceSlice"
    assert EventResource.DEVICE_CLASS.value == "DeviceClass"


def test_discovery_serves_the_dra_kinds_without_asking() -> None:
    assert BUILTIN_RESOURCES["ResourceClaim"] == (R, "resourceclaims", True)
    assert BUILTIN_RESOURCES["ResourceClaimTemplate"] == (R, "resourceclaimtemplates", True)
    assert BUILTIN_RESOURCES["ResourceSlice"] == (R, "resourceslices", False)
    assert BUILTIN_RESOURCES["DeviceClass"] == (R, "deviceclasses", False)


def test_a_typo_in_a_dra_kind_is_caught(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": R, "kind": "ResourceClam", "metadata": {"name": "c"}}))
    with pytest.raises(ManifestError) as e:
        load_manifests(f)
    assert str(e.value) == f'{f}: document 1 (ResourceClam c): kind: unknown kind "ResourceClam" in resource.k8s.io/v1; did you mean "ResourceClaim"?'


def test_the_example_loads_every_dra_kind() -> None:
    kinds = [o["kind"] for o in load_manifests(EXAMPLE)]
    assert {"DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "ResourceClaim"} <= set(kinds)
    assert uses_claims(load_manifests(EXAMPLE))
    assert not uses_claims(load_manifests(ROOT / "examples" / "demo" / "cluster.yaml"))


# --- generateName -------------------------------------------------------------------------------
def test_generate_name_is_pod_and_claim() -> None:
    assert generate_name("training", "gpu") == "training-gpu-"
    fits = "p" * 40 + "-" + "c" * 15 + "-"  # 57 characters: kept
    assert generate_name("p" * 40, "c" * 15) == fits


def test_a_long_generate_name_cuts_both_names_in_proportion() -> None:
    # Go: len("a"*40 + "-" + "b"*30 + "-") = 72 > 57: pod[:40*57/72] + "-" + claim[:30*57/72]
    assert generate_name("a" * 40, "b" * 30) == "a" * 31 + "-" + "b" * 23


# --- the controller on an object store -----------------------------------------------------------
def _store() -> tuple[ObjectStore, ResourceClaimController, list[tuple[str, str, str]]]:
    store = ObjectStore()
    events: list[tuple[str, str, str]] = []

    def event(regarding: Any, etype: str, reason: str, _action: str, note: str) -> None:
        events.append((regarding["metadata"]["name"], reason, note))

    ctl = ResourceClaimController(store, now=lambda: "2026-01-01T00:00:00Z", event=event)
    store.subscribe(ctl.on_event)
    return store, ctl, events


def _template(name: str = "single-gpu", labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"annotations": {"team": "ml"}}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": R,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": {"metadata": meta, "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}},
    }


def _pod(name: str = "train", claims: list[dict[str, Any]] | None = None, node: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}]}
    spec["resourceClaims"] = claims if claims is not None else [{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"}, "spec": spec}


def _allocation(node: str = "n1", device: str = "gpu-0") -> dict[str, Any]:
    return {
        "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": node, "device": device}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]},
    }


def _claims(store: ObjectStore) -> list[dict[str, Any]]:
    return store.list(R, "ResourceClaim")


def test_a_template_claim_is_made_for_the_pod_as_the_controller_makes_it() -> None:
    store, _ctl, events = _store()
    store.create(_template(labels={"app": "train"}))
    pod = store.create(_pod())
    (claim,) = _claims(store)
    uid = pod["metadata"]["uid"]
    name = claim["metadata"]["name"]
    assert name.startswith("train-gpu-") and len(name) == len("train-gpu-") + 5
    md = claim["metadata"]
    assert md["generateName"] == "train-gpu-"
    assert md["namespace"] == "ml"
    assert md["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": uid, "controller": True}]
    assert md["annotations"] == {"team": "ml", "resource.kubernetes.io/pod-claim-name": "gpu"}
    assert md["labels"] == {"app": "train"}
    assert md["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert claim["spec"] == _template()["spec"]["spec"]
    assert store.get("v1", "Pod", "train", "ml")["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": name}]
    assert events == []


def test_the_generated_name_is_the_same_in_every_run() -> None:
    names = []
    for _ in range(2):
        store, _ctl, _ev = _store()
        store.create(_template())
        store.create(_pod())
        names.append(_claims(store)[0]["metadata"]["name"])
    assert names[0] == names[1]


def test_a_pod_updated_later_gets_no_second_claim() -> None:
    store, _ctl, _ev = _store()
    store.create(_template())
    store.create(_pod())
    store.patch("v1", "Pod", "train", {"metadata": {"labels": {"x": "y"}}}, "ml")
    assert len(_claims(store)) == 1


def test_an_orphaned_claim_is_adopted_not_made_again() -> None:
    store, ctl, _ev = _store()
    store.create(_template())
    pod = store.create(_pod())
    (claim,) = _claims(store)
    # the pod's status lost the entry (as when the controller failed before writing it)
    store.patch("v1", "Pod", "train", {"status": {"resourceClaimStatuses": None}}, "ml")
    ctl.on_event("MODIFIED", "Pod", None, store.peek("v1", "Pod", "train", "ml"))
    assert [c["metadata"]["name"] for c in _claims(store)] == [claim["metadata"]["name"]]
    assert store.get("v1", "Pod", "train", "ml")["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]
    assert pod["metadata"]["uid"] == claim["metadata"]["ownerReferences"][0]["uid"]


def test_a_missing_template_is_an_event_and_the_claim_comes_with_the_template() -> None:
    store, _ctl, events = _store()
    store.create(_pod())
    assert _claims(store) == []
    assert events == [("train", "FailedResourceClaimCreation", 'PodResourceClaim gpu: resource claim template "single-gpu": resourceclaimtemplates.resource.k8s.io "single-gpu" not found')]
    store.create(_template())
    (claim,) = _claims(store)
    assert store.get("v1", "Pod", "train", "ml")["status"]["resourceClaimStatuses"] == [{"name": "gpu", "resourceClaimName": claim["metadata"]["name"]}]


def test_a_plain_claim_is_left_to_the_user() -> None:
    store, _ctl, events = _store()
    store.create(_pod(claims=[{"name": "gpu", "resourceClaimName": "shared"}]))
    assert _claims(store) == []
    assert "status" not in store.get("v1", "Pod", "train", "ml")
    assert events == []


def _allocate(store: ObjectStore, name: str, pods: list[dict[str, Any]], node: str = "n1") -> None:
    """What the scheduler's DynamicResources writes: the finalizer, the allocation, reservedFor."""
    store.patch(R, "ResourceClaim", name, {"metadata": {"finalizers": [FINALIZER]}}, "ml")
    reserved = [{"resource": "pods", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]} for p in pods]
    store.patch(R, "ResourceClaim", name, {"status": {"allocation": _allocation(node), "reservedFor": reserved}}, "ml")


def test_a_deleted_pods_generated_claim_is_deallocated_and_deleted() -> None:
    store, ctl, _ev = _store()
    store.create(_template())
    pod = store.create(_pod())
    name = _claims(store)[0]["metadata"]["name"]
    _allocate(store, name, [pod])
    store.delete("v1", "Pod", "train", "ml")
    assert _claims(store) == []
    (row,) = ctl.rows()
    assert row == {"namespace": "ml", "name": name, "pods": ["train"], "node": "n1", "devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}], "status": "Deleted"}


def test_a_done_pods_generated_claim_is_deleted() -> None:
    store, _ctl, _ev = _store()
    store.create(_template())
    pod = store.create(_pod(node="n1"))
    name = _claims(store)[0]["metadata"]["name"]
    _allocate(store, name, [pod])
    store.patch("v1", "Pod", "train", {"status": {"phase": "Succeeded"}}, "ml")
    assert _claims(store) == []


def _shared(store: ObjectStore) -> None:
    store.create({"apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": "shared", "namespace": "ml"}, "spec": {"devices": {"requests": []}}})


def test_a_plain_claim_no_pod_reserves_is_deallocated_and_kept() -> None:
    store, ctl, _ev = _store()
    _shared(store)
    a = store.create(_pod("a", claims=[{"name": "gpu", "resourceClaimName": "shared"}]))
    b = store.create(_pod("b", claims=[{"name": "gpu", "resourceClaimName": "shared"}]))
    _allocate(store, "shared", [a, b])
    store.delete("v1", "Pod", "a", "ml")
    claim = store.get(R, "ResourceClaim", "shared", "ml")
    assert claim["status"]["reservedFor"] == [{"resource": "pods", "name": "b", "uid": b["metadata"]["uid"]}]
    assert claim["status"]["allocation"] == _allocation()
    store.delete("v1", "Pod", "b", "ml")
    claim = store.get(R, "ResourceClaim", "shared", "ml")
    assert claim["status"] == {}
    assert "finalizers" not in claim["metadata"]
    (row,) = ctl.rows()
    assert (row["status"], row["node"], row["pods"]) == ("Deallocated", "n1", ["b"])  # the last reservation


def test_without_the_finalizer_an_unreserved_claim_stays_allocated() -> None:
    # syncClaim clears the allocation only of claims the scheduler allocated (its finalizer)
    store, _ctl, _ev = _store()
    _shared(store)
    a = store.create(_pod("a", claims=[{"name": "gpu", "resourceClaimName": "shared"}]))
    ref = {"resource": "pods", "name": "a", "uid": a["metadata"]["uid"]}
    store.patch(R, "ResourceClaim", "shared", {"status": {"allocation": _allocation(), "reservedFor": [ref]}}, "ml")
    store.delete("v1", "Pod", "a", "ml")
    assert store.get(R, "ResourceClaim", "shared", "ml")["status"] == {"allocation": _allocation()}


def test_a_bound_pod_gets_its_allocated_claim_reserved() -> None:
    store, _ctl, _ev = _store()
    _shared(store)
    store.patch(R, "ResourceClaim", "shared", {"status": {"allocation": _allocation()}}, "ml")
    pod = store.create(_pod("a", claims=[{"name": "gpu", "resourceClaimName": "shared"}], node="n1"))
    reserved = store.get(R, "ResourceClaim", "shared", "ml")["status"]["reservedFor"]
    assert reserved == [{"resource": "pods", "name": "a", "uid": pod["metadata"]["uid"]}]


def test_a_reservation_of_a_pod_not_in_the_cluster_yet_is_kept() -> None:
    # the file's pods are created after its other objects: a claim of the file reserved for
    # one of them keeps the reservation
    store, _ctl, _ev = _store()
    ref = {"resource": "pods", "name": "later", "uid": "uid-later"}
    store.create({"apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "ml"}, "status": {"allocation": _allocation(), "reservedFor": [ref]}})
    assert store.get(R, "ResourceClaim", "c", "ml")["status"]["reservedFor"] == [ref]


@pytest.mark.parametrize(
    ("selector", "node"),
    [
        (None, None),
        ({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}]}, "n2"),
        ({"nodeSelectorTerms": [{"matchExpressions": [{"key": "rack", "operator": "In", "values": ["r1"]}]}]}, None),
    ],
)
def test_a_claims_node_is_its_allocations_single_node(selector: Any, node: str | None) -> None:
    alloc = _allocation()
    alloc["nodeSelector"] = selector
    claim = {"metadata": {"name": "c", "namespace": "ml"}, "status": {"allocation": alloc}}
    assert claim_row(claim)["node"] == node


# --- the simulated cluster ------------------------------------------------------------------------
def _config(tmp_path: Path, cfg: dict[str, Any] = NO_DRA_PLUGIN) -> str:
    f = tmp_path / "config.yaml"
    f.write_text(yaml.safe_dump(cfg))
    return str(f)


def test_simulate_makes_the_examples_template_claims_and_reports_every_claim(tmp_path: Path) -> None:
    report = simulate(str(EXAMPLE), _config(tmp_path), seed=1)
    claims = {c["name"]: c for c in report["claims"]}
    assert report["claims"][0]["name"] == "h100"
    gen = sorted(n for n in claims if n != "h100")
    assert [n[: -len("xxxxx")] for n in gen] == ["big-training-gpus-", "training-gpu-"]
    assert all(c["status"] == "Pending" and c["devices"] == [] and c["node"] is None for c in claims.values())
    assert {p["name"]: p["status"] for p in report["pods"]} == {"training": "Scheduled", "inference": "Scheduled", "big-training": "Scheduled", "web": "Scheduled"}


def test_a_file_without_dra_has_no_claims_in_the_report(tmp_path: Path) -> None:
    report = simulate(str(ROOT / "examples" / "demo" / "cluster.yaml"), str(ROOT / "examples" / "demo" / "config.yaml"), seed=1)
    assert "claims" not in report


def test_simulate_prints_the_claims_table(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["simulate", str(EXAMPLE), "--config", _config(tmp_path), "--seed", "1"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    title = next(i for i, line in enumerate(lines) if line.strip() == "ResourceClaims")
    assert lines[title + 2].startswith("┃ claim ") and lines[title + 2].endswith("┃ reserved for ┃ node ┃ devices (request: driver/pool/device) ┃ status  ┃")
    assert lines[title + 4].startswith("│ default/h100 ") and lines[title + 4].endswith("│ -            │ -    │ -                                     │ Pending │")


class _Waits:
    """Rejects every node until an object of ``kind`` exists; its hint records the events that
    reach it (the scheduler's queueing hints for resource.k8s.io kinds)."""

    kind = ""
    seen: list[tuple[str | None, str | None]] = []

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(_pod: Any, old: Any, new: Any) -> QueueingHint:
            type(self).seen.append(((old or {}).get("kind"), (new or {}).get("kind")))
            return QueueingHint.QUEUE

        return [ClusterEventWithHint(ClusterEvent(self.kind, ActionType.ADD | ActionType.UPDATE), hint)]

    @hookimpl
    def filter(self, pod: Any, node_info: Any) -> Status | None:
        if not self.handle.objects.list(R, self.kind):
            return Status.unschedulable(f"no {self.kind} yet")
        return None


DRA_OBJECTS = {
    "DeviceClass": {"apiVersion": R, "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"}, "spec": {}},
    "ResourceSlice": {"apiVersion": R, "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"}, "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}, "devices": []}},
    "ResourceClaim": {"apiVersion": R, "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"}, "spec": {"devices": {"requests": []}}},
}


@pytest.mark.parametrize("kind", sorted(DRA_OBJECTS))
def test_a_dra_object_arriving_later_reaches_the_queueing_hints(tmp_path: Path, kind: str, ks: Any) -> None:
    class Waits(_Waits):
        pass

    Waits.kind, Waits.seen = kind, []
    obj = copy.deepcopy(DRA_OBJECTS[kind])
    obj["metadata"]["annotations"] = {"sim.kubesched.io/arrive-at": "1m"}
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump_all([node, obj, pod]))
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": [{"name": "DynamicResources"}]}, "filter": {"enabled": [{"name": "Waits"}]}}}],
    }
    report = simulate(str(f), _config(tmp_path, cfg), seed=1, registry=ks.registry({"Waits": Waits}))
    (row,) = report["pods"]
    assert (row["status"], row["node"]) == ("Scheduled", "n1")
    assert Waits.seen[0] == (None, kind)


# --- end to end with DynamicResources (the default profile) ---------------------------------------
BIG_TRAINING_MSG = (
    "0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, preemption: "
    "0/3 nodes are available: 3 Preemption is not helpful for scheduling."
)


def _generated(name: str, prefix: str) -> bool:
    return name.startswith(prefix) and len(name) == len(prefix) + 5


def test_simulate_allocates_the_examples_claims_and_shows_them() -> None:
    report = simulate(str(EXAMPLE), seed=1)
    pods = {p["name"]: (p["status"], p["node"], p["message"]) for p in report["pods"]}
    assert pods == {
        "training": ("Scheduled", "gpu-node-1", ""),
        "inference": ("Scheduled", "gpu-node-2", ""),
        "big-training": ("Unschedulable", None, BIG_TRAINING_MSG),
        "web": ("Scheduled", "cpu-node", ""),
    }
    h100, training, big = report["claims"]
    assert h100 == {"namespace": "default", "name": "h100", "pods": ["inference"], "node": "gpu-node-2", "devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-node-2", "device": "gpu-0"}], "status": "Allocated"}
    assert _generated(training.pop("name"), "training-gpu-")
    assert training == {"namespace": "default", "pods": ["training"], "node": "gpu-node-1", "devices": [{"request": "gpu", "driver": "gpu.example.com", "pool": "gpu-node-1", "device": "gpu-0"}], "status": "Allocated"}
    assert _generated(big.pop("name"), "big-training-gpus-")
    assert big == {"namespace": "default", "pods": [], "node": None, "devices": [], "status": "Pending"}


def test_simulate_prints_each_claims_devices() -> None:
    res = CliRunner().invoke(main, ["simulate", str(EXAMPLE), "--seed", "1"])
    assert res.exit_code == 0, res.output
    rows = [line for line in res.output.splitlines() if line.startswith("│ default/")]
    assert "│ default/h100                    │ inference    │ gpu-node-2 │ gpu: gpu.example.com/gpu-node-2/gpu-0 │ Allocated │" in rows
    (training,) = [r for r in rows if r.startswith("│ default/training-gpu-")]
    assert training.endswith("│ training     │ gpu-node-1 │ gpu: gpu.example.com/gpu-node-1/gpu-0 │ Allocated │")


def test_explain_shows_why_the_device_request_did_not_fit() -> None:
    from kubesched.runtime.cli.explain_cmd import explain_simulated

    ex = explain_simulated(str(EXAMPLE), "big-training", seed=1)
    assert ex.message == BIG_TRAINING_MSG
    assert {n: v["DynamicResources"] for n, v in ex.filter.items()} == dict.fromkeys(["gpu-node-1", "gpu-node-2", "cpu-node"], "cannot allocate all claims")
    claim = next(c["name"] for c in simulate(str(EXAMPLE), seed=1)["claims"] if c["name"].startswith("big-training-"))
    busy = f"claim default/{claim}, request gpus: needs 3 devices, 2 match, 1 of them already allocated"
    assert ex.devices == {"gpu-node-1": busy, "gpu-node-2": busy, "cpu-node": f"claim default/{claim}, request gpus: no device matches the selectors (0 devices on the node)"}
    assert ex.as_dict()["devices"] == ex.devices
    res = CliRunner().invoke(main, ["explain", "big-training", "--cluster", str(EXAMPLE), "--seed", "1", "-o", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["devices"] == ex.devices
    res = CliRunner().invoke(main, ["explain", "big-training", "--cluster", str(EXAMPLE), "--seed", "1"])
    assert res.exit_code == 0, res.output
    # the table wraps the reason: the Filter reason, then the allocator's words in brackets
    assert "│ cpu-node   │ rejected │ DynamicResources: cannot allocate all claims (claim default/big-training-gpus-" in res.output


def _gpu_cluster(tmp_path: Path) -> Path:
    """One node with two GPUs; "first" wants both for an hour, "second" wants both too."""
    objs = [o for o in load_manifests(EXAMPLE) if o["kind"] in ("DeviceClass", "ResourceClaimTemplate") or o["metadata"]["name"] in ("gpu-node-1", "gpu-node-1-gpu.example.com")]
    two = copy.deepcopy(next(o for o in objs if o["metadata"]["name"] == "three-gpus"))
    two["metadata"]["name"] = "two-gpus"
    two["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    objs.append(two)
    for name, ann in (("first", {"sim.kubesched.io/run-for": "1h"}), ("second", {})):
        objs.append({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": ann},
            "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus"}], "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpus"}]}}]},
        })
    f = tmp_path / "gpus.yaml"
    f.write_text(yaml.safe_dump_all(objs))
    return f


def test_a_completed_pods_claim_is_deleted_and_its_devices_go_to_the_next_pod(tmp_path: Path) -> None:
    report = simulate(str(_gpu_cluster(tmp_path)), seed=1)
    pods = {p["name"]: (p["status"], p["node"], p["message"]) for p in report["pods"]}
    assert pods == {"first": ("Completed", "gpu-node-1", "ran 1h0m0s on node gpu-node-1 (sim.kubesched.io/run-for)"), "second": ("Scheduled", "gpu-node-1", "")}
    first, second = report["claims"]
    devices = [{"request": "gpus", "driver": "gpu.example.com", "pool": "gpu-node-1", "device": d} for d in ("gpu-0", "gpu-1")]
    assert _generated(first.pop("name"), "first-gpus-") and _generated(second.pop("name"), "second-gpus-")
    assert first == {"namespace": "default", "pods": ["first"], "node": "gpu-node-1", "devices": devices, "status": "Deleted"}
    assert second == {"namespace": "default", "pods": ["second"], "node": "gpu-node-1", "devices": devices, "status": "Allocated"}


def test_explain_alone_makes_the_pods_template_claim() -> None:
    from kubesched.runtime.cli.explain_cmd import explain_simulated

    ex = explain_simulated(str(EXAMPLE), "training", seed=1, alone=True)
    assert ex.prefilter["DynamicResources"] == "success"
    assert ex.feasible == ["gpu-node-1", "gpu-node-2"]  # inference holds one H100 of gpu-node-2
    assert ex.filter["cpu-node"]["DynamicResources"] == "cannot allocate all claims"
    assert ex.selected == "gpu-node-1"
