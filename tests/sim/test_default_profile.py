"""Whole scheduling runs with kube-scheduler's default profile on the simulated cluster."""

from __future__ import annotations

from kubesched.testing import make_node, make_pod

ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"


def nodes(n: int, cpu: str = "4", memory: str = "16Gi", zones: int = 1) -> list[dict]:
    return [make_node().name(f"n{i}").capacity(cpu=cpu, memory=memory, pods="110").label(ZONE, f"z{i % zones}").obj() for i in range(n)]


def test_taints_with_and_without_tolerations(run_sim) -> None:
    tainted = make_node().name("tainted").capacity(cpu="4", memory="8Gi").taints([{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]).obj()
    res = run_sim([
        tainted,
        make_pod().name("plain").req(cpu="1").obj(),
        make_pod().name("tolerant").req(cpu="1").toleration("dedicated", "gpu", "NoSchedule").obj(),
    ])
    assert res["plain"]["status"] == "Unschedulable"
    assert res["plain"]["message"] == (
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert res["tolerant"]["node"] == "tainted"


def test_prefer_no_schedule_taint_is_avoided(run_sim) -> None:
    soft = make_node().name("soft").capacity(cpu="4", memory="8Gi").taints([{"key": "k", "value": "v", "effect": "PreferNoSchedule"}]).obj()
    clean = make_node().name("clean").capacity(cpu="4", memory="8Gi").obj()
    res = run_sim([soft, clean, make_pod().name("p").req(cpu="100m").obj()])
    assert res["p"]["node"] == "clean"


def test_node_affinity_and_selector(run_sim) -> None:
    res = run_sim([
        *nodes(3, zones=3),
        make_pod().name("sel").node_selector({ZONE: "z2"}).obj(),
        make_pod().name("aff").node_affinity_in(ZONE, ["z1"]).obj(),
        make_pod().name("nowhere").node_affinity_in(ZONE, ["z9"]).obj(),
    ])
    assert res["sel"]["node"] == "n2"
    assert res["aff"]["node"] == "n1"
    assert res["nowhere"]["message"] == (
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_topology_spread_across_zones(run_sim) -> None:
    pods = [
        make_pod().name(f"s{i}").label("app", "s").req(cpu="100m")
        .spread_constraint(1, ZONE, "DoNotSchedule", {"matchLabels": {"app": "s"}}).obj()
        for i in range(6)
    ]
    res = run_sim([*nodes(6, zones=3), *pods])
    zones = {}
    for i in range(6):
        node = res[f"s{i}"]["node"]
        zones[int(node[1:]) % 3] = zones.get(int(node[1:]) % 3, 0) + 1
    assert zones == {0: 2, 1: 2, 2: 2}


def test_pod_anti_affinity_across_hostnames(run_sim) -> None:
    pods = [make_pod().name(f"a{i}").label("app", "a").pod_anti_affinity_in("app", HOST, ["a"]).obj() for i in range(3)]
    res = run_sim([*nodes(2), *pods])
    placed = sorted(res[f"a{i}"]["node"] for i in range(2))
    assert placed == ["n0", "n1"]
    assert res["a2"]["status"] == "Unschedulable"
    assert res["a2"]["message"] == (
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. "
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )


MOST_ALLOCATED = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
  - name: VolumeBinding
    args:
      bindTimeoutSeconds: 60
"""


def test_most_allocated_packs_least_allocated_spreads(run_sim) -> None:
    pods = [make_pod().name(f"p{i}").req(cpu="1", memory="1Gi").obj() for i in range(4)]
    spread = run_sim([*nodes(4), *pods])
    packed = run_sim([*nodes(4), *pods], config=MOST_ALLOCATED)
    assert len({spread[f"p{i}"]["node"] for i in range(4)}) == 4
    assert len({packed[f"p{i}"]["node"] for i in range(4)}) == 1


def test_insufficient_resources_message(run_sim) -> None:
    res = run_sim([
        make_node().name("small").capacity(cpu="1", memory="1Gi").obj(),
        make_node().name("unsched").capacity(cpu="8", memory="8Gi").unschedulable().obj(),
        make_pod().name("big").req(cpu="2", memory="512Mi").obj(),
    ])
    assert res["big"]["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. "
        # 2 cpu > the small node's allocatable: NodeResourcesFit (v1.34) marks that unresolvable
        "no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_pvc_bound_to_zonal_pv(run_sim) -> None:
    pv = {
        "apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "pv-z1", "labels": {ZONE: "z1"}},
        "spec": {
            "capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
            "claimRef": {"namespace": "default", "name": "data"},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["z1"]}]}]}},
        },
        "status": {"phase": "Bound"},
    }
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        # as the PV controller leaves a bound claim (kube-scheduler checks the annotation)
        "metadata": {"name": "data", "namespace": "default", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeName": "pv-z1", "storageClassName": "standard"},
        "status": {"phase": "Bound"},
    }
    res = run_sim([*nodes(3, zones=3), pv, pvc, make_pod().name("db").pvc("data").obj()])
    assert res["db"]["node"] == "n1"


def test_unbound_immediate_pvc_is_rejected(run_sim) -> None:
    pvc = {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "pending", "namespace": "default"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    }
    res = run_sim([*nodes(2), pvc, make_pod().name("p").pvc("pending").obj()])
    assert res["p"]["status"] == "Unschedulable"
    assert "pod has unbound immediate PersistentVolumeClaims" in res["p"]["message"]


def test_preemption_of_a_lower_priority_pod(run_sim) -> None:
    res = run_sim([
        make_node().name("only").capacity(cpu="2", memory="4Gi").obj(),
        make_pod().name("low").priority(0).req(cpu="1500m").node("only").obj(),
        make_pod().name("high").priority(1000).req(cpu="1").obj(),
    ])
    assert res["high"]["node"] == "only"
    report = res["_report"]
    assert report["summary"]["scheduled"] == 1
