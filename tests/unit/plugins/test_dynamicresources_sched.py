"""DynamicResources in a whole scheduling run on the simulated cluster (the default profile):
a pod's ResourceClaim is allocated on the node it lands on and reserved for it, the devices it
holds are not given to the next claim, and a claim no node can satisfy gets kube-scheduler's
FailedScheduling message. With the default profile, an extended resource a DeviceClass serves
(DRAExtendedResource) gets the scheduler's own claim."""

from __future__ import annotations

from typing import Any

import yaml

API = "resource.k8s.io/v1"
GPU = "gpu.example.com"


def _slice(node: str, *devices: str) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceSlice", "metadata": {"name": f"{node}-{GPU}"},
            "spec": {"nodeName": node, "driver": GPU, "pool": {"name": node, "resourceSliceCount": 1, "generation": 0},
                     "devices": [{"name": d} for d in devices]}}


def _claim(name: str, count: int) -> dict[str, Any]:
    return {"apiVersion": API, "kind": "ResourceClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"devices": {"requests": [
                {"name": "gpu", "exactly": {"allocationMode": "ExactCount", "count": count, "deviceClassName": GPU}}]}}}


def _pod(ks: Any, name: str, claim: str) -> dict[str, Any]:
    p = ks.pod(name, cpu="1")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": claim}]
    return p


GPU_CLASS = {"apiVersion": API, "kind": "DeviceClass", "metadata": {"name": GPU},
             "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]}}


def test_gpu_claims_are_allocated_reserved_and_exhausted(ks) -> None:
    manifests = [
        *ks.nodes(2), GPU_CLASS, _slice("n1", "gpu-0", "gpu-1"), _slice("n2", "gpu-0"),
        _claim("two-gpus", 2), _claim("one-gpu", 1), _claim("three-gpus", 3),
        _pod(ks, "a", "two-gpus"), _pod(ks, "b", "one-gpu"), _pod(ks, "c", "three-gpus"),
    ]
    r = ks.run({}, {"multiPoint": ["DynamicResources"]}, manifests)
    assert r.result("a").node == "n1"  # only n1 has two devices
    assert r.result("b").node == "n2"  # n1's devices are a's
    claim = r.cluster.store.get(API, "ResourceClaim", "two-gpus", "default")
    assert claim["metadata"]["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    status = claim["status"]
    assert status["reservedFor"] == [{"resource": "pods", "name": "a", "uid": "a"}]
    assert [(x["request"], x["driver"], x["pool"], x["device"]) for x in status["allocation"]["devices"]["results"]] == [
        ("gpu", GPU, "n1", "gpu-0"), ("gpu", GPU, "n1", "gpu-1")]
    assert status["allocation"]["nodeSelector"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}
    assert "allocationTimestamp" in status["allocation"]
    expected = ("0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
                "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    assert r.result("c").node is None
    assert r.result("c").message == expected
    assert expected in [e.note for e in r.events("FailedScheduling")]
    assert "status" not in r.cluster.store.get(API, "ResourceClaim", "three-gpus", "default")


def test_a_pod_waits_at_pre_enqueue_for_its_claim(ks) -> None:
    """PreEnqueue keeps the pod out of the queue until the claim exists; creating the claim
    (a ResourceClaim Add, queued by isSchedulableAfterClaimChange) lets it be scheduled."""
    r = ks.build({}, {"multiPoint": ["DynamicResources"]},
                 [*ks.nodes(1), GPU_CLASS, _slice("n1", "gpu-0"), _pod(ks, "a", "later")]).start()
    assert "a" not in {x.name for x in r.results.values() if x.node}
    r.create(_claim("later", 1))
    assert r.result("a").node == "n1"


def _default_profile(ks: Any, manifests: list[dict[str, Any]]) -> Any:
    """A run with the default profile (every default plugin, NodeResourcesFit's delegation too)."""
    from kubesched.runtime.cluster.simulated import SimulatedCluster
    from kubesched.runtime.config import load_config_data
    from kubesched.runtime.scheduler import Scheduler

    reg = ks.registry()
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"schedulerName": ks.SCHEDULER_NAME}]}
    cfg = load_config_data(yaml.safe_dump(doc), installed_plugins=reg.names())
    cluster = SimulatedCluster([dict(m) for m in manifests])
    r = ks.Run(Scheduler(cfg, reg, cluster, simulated=True, seed=1), cluster)
    r.cluster.run(r.scheduler)
    return r


def test_an_extended_resource_served_by_a_device_class_gets_a_claim(ks) -> None:
    """DRAExtendedResource (on in v1.36): a pod asking ``example.com/gpu: 1``, which no node
    advertises but a DeviceClass names, lands where a ResourceSlice has a device: the scheduler
    creates the pod's special claim, allocates and reserves it, and records it in the pod's
    ``status.extendedResourceClaimStatus``. A second such pod finds the only device taken."""
    gpu_class = {**GPU_CLASS, "spec": {**GPU_CLASS["spec"], "extendedResourceName": "example.com/gpu"}}
    pods = []
    for name in ("a", "b"):
        p = ks.pod(name, cpu="1")
        p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
        p["spec"]["containers"][0]["resources"]["limits"] = {"example.com/gpu": "1"}
        pods.append(p)
    r = _default_profile(ks, [*ks.nodes(2), gpu_class, _slice("n2", "gpu-0"), *pods])
    assert r.result("a").node == "n2"  # n1 has no slice: "cannot allocate all claims"
    (claim,) = r.cluster.store.list(API, "ResourceClaim")
    md = claim["metadata"]
    assert md["name"].startswith("a-extended-resources-") and len(md["name"]) == len("a-extended-resources-") + 5
    assert md["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert md["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "a", "uid": "a", "controller": True}]
    assert md["finalizers"] == ["resource.kubernetes.io/delete-protection"]
    # Go names the request by the resource's index among the container's sorted requests
    # (cpu, example.com/gpu)
    assert claim["spec"]["devices"]["requests"] == [{"name": "container-0-request-1", "exactly": {
        "deviceClassName": GPU, "allocationMode": "ExactCount", "count": 1}}]
    status = claim["status"]
    assert status["reservedFor"] == [{"resource": "pods", "name": "a", "uid": "a"}]
    assert [(x["request"], x["driver"], x["pool"], x["device"]) for x in status["allocation"]["devices"]["results"]] == [
        ("container-0-request-1", GPU, "n2", "gpu-0")]
    pod = r.cluster.store.get("v1", "Pod", "a", "default")
    assert pod["status"]["extendedResourceClaimStatus"] == {
        "requestMappings": [{"containerName": pod["spec"]["containers"][0]["name"], "resourceName": "example.com/gpu",
                             "requestName": "container-0-request-1"}],
        "resourceClaimName": md["name"],
    }
    assert r.result("b").node is None
    assert r.result("b").message == (
        "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
