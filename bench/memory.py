"""Memory per node and per pod of kubesched's scheduler state (no API server).

    python bench/memory.py --nodes 5000 --pods 10000 [--method tracemalloc|rss] [--json]

Builds the Scheduler that ``kubesched run`` builds (default profile) and feeds it what the
informers would: N Node objects, then M pods already bound to nodes (``spec.nodeName`` set: they
go into the cache's NodeInfos), then M pending pods (they go into the scheduling queue). Objects
are JSON-decoded from text copied from kube-apiserver v1.36's answers for the bench's objects
(bench/loadgen.py's Node after its status update, its Pod pending and bound: managedFields,
defaults, tolerations, the zone label the API server copies to a pod at binding), so the dicts
are what the informer store would hold; the store itself shares these dicts, so they are
counted once.

``--method tracemalloc`` (default) counts Python allocations (exact, excludes interpreter
overhead; tracemalloc's own bookkeeping is not counted). ``--method rss`` reads VmRSS deltas from
/proc/self/status (includes allocator slack; run in a fresh process). Each figure is the growth
divided by the number of objects added: bytes per node, per bound pod, per pending pod.
``--drop-managed-fields`` removes ``metadata.managedFields`` before the scheduler sees an object,
as kube-scheduler's pod informer does (its transform in pkg/scheduler/scheduler.go): what that
would save.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
import uuid
from typing import Any

NODE_TEXT = """{
 "kind": "Node", "apiVersion": "v1",
 "metadata": {"name": "@NAME@", "uid": "@UID@", "resourceVersion": "@RV@",
  "creationTimestamp": "2026-01-01T00:00:00Z",
  "labels": {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "@NAME@", "kubernetes.io/os": "linux",
             "topology.kubernetes.io/zone": "@ZONE@"},
  "managedFields": [
   {"manager": "kubesched-bench-loadgen", "operation": "Update", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
    "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/arch": {},
      "f:kubernetes.io/hostname": {}, "f:kubernetes.io/os": {}, "f:topology.kubernetes.io/zone": {}}}}}]},
 "spec": {},
 "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
  "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}, "phase": "Running",
  "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-01-01T00:00:00Z",
    "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
  "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
  "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
    "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "", "operatingSystem": "", "architecture": ""}}
}"""

POD_TEXT = """{
 "kind": "Pod", "apiVersion": "v1",
 "metadata": {"name": "@NAME@", "namespace": "bench", "uid": "@UID@", "resourceVersion": "@RV@",
  "generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z",@LABELS@
  "managedFields": [
   {"manager": "kubesched-bench-loadgen", "operation": "Update", "apiVersion": "v1", "time": "2026-01-01T00:00:00Z",
    "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:containers": {"k:{\\"name\\":\\"pause\\"}": {".": {}, "f:image": {},
      "f:imagePullPolicy": {}, "f:name": {}, "f:ports": {".": {}, "k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}": {".": {},
      "f:containerPort": {}, "f:protocol": {}}}, "f:resources": {".": {}, "f:limits": {".": {}, "f:cpu": {}, "f:memory": {}},
      "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
      "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
      "f:terminationGracePeriodSeconds": {}}}}]},
 "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10", "ports": [{"containerPort": 80, "protocol": "TCP"}],
   "resources": {"limits": {"cpu": "100m", "memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
   "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
  "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "securityContext": {},
  "schedulerName": "default-scheduler", "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
  "priority": 0, "tolerations": [
   {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
   {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]@NODENAME@},
 "status": {"phase": "Pending", "qosClass": "Guaranteed"@CONDITIONS@}
}"""

BOUND_EXTRA = ', "nodeName": "@NODE@"'
BOUND_COND = ', "conditions": [{"type": "PodScheduled", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-01-01T00:00:00Z"}]'


def node_json(i: int) -> str:
    return (
        NODE_TEXT.replace("@NAME@", f"node-{i}")
        .replace("@UID@", str(uuid.uuid4()))
        .replace("@RV@", str(1000 + i))
        .replace("@ZONE@", f"zone-{i % 3}")
    )


def pod_json(i: int, node: str | None) -> str:
    t = POD_TEXT.replace("@NAME@", f"pod-{i}").replace("@UID@", str(uuid.uuid4())).replace("@RV@", str(100000 + i))
    if node:
        zone = f"zone-{int(node.rsplit('-', 1)[1]) % 3}"
        labels = f' "labels": {{"topology.kubernetes.io/zone": "{zone}"}},'  # copied from the node at binding
        return t.replace("@NODENAME@", BOUND_EXTRA.replace("@NODE@", node)).replace("@CONDITIONS@", BOUND_COND).replace("@LABELS@", labels)
    return t.replace("@NODENAME@", "").replace("@CONDITIONS@", "").replace("@LABELS@", "")


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def measure(nodes: int, pods: int, method: str = "tracemalloc", drop_managed_fields: bool = False) -> dict[str, Any]:
    from kubesched.runtime.cluster.simulated import SimulatedCluster
    from kubesched.runtime.config import load_config
    from kubesched.runtime.registry import Registry
    from kubesched.runtime.scheduler import Scheduler
    from kubesched.sdk.readonly import read_only

    reg = Registry.discover()
    cfg = load_config(None, installed_plugins=reg.names())
    sched = Scheduler(cfg, reg, SimulatedCluster([], source="bench"), simulated=True)
    # Pre-build the texts so that only the decoded objects and the scheduler's state are counted.
    node_texts = [node_json(i) for i in range(nodes)]
    bound_texts = [pod_json(i, f"node-{i % nodes}") for i in range(pods)]
    pending_texts = [pod_json(pods + i, None) for i in range(pods)]
    store: list[Any] = []  # the informer store: keeps the decoded dicts alive
    gc.collect()

    def decode(t: str) -> Any:
        raw = json.loads(t)
        if drop_managed_fields:
            raw["metadata"].pop("managedFields", None)
        return read_only(raw)  # as the informers store it: the scheduler's views share it

    def now() -> int:
        return tracemalloc.get_traced_memory()[0] if method == "tracemalloc" else _rss()

    if method == "tracemalloc":
        tracemalloc.start()
    out: dict[str, Any] = {"nodes": nodes, "pods": pods, "method": method, "drop_managed_fields": drop_managed_fields}
    t0 = time.perf_counter()
    base = now()
    for t in node_texts:
        raw = decode(t)
        store.append(raw)
        sched.handlers.handle("ADDED", "Node", None, raw)
    sched.cache.update_snapshot()
    gc.collect()
    after_nodes = now()
    for t in bound_texts:
        raw = decode(t)
        store.append(raw)
        sched.handlers.handle("ADDED", "Pod", None, raw)
    sched.cache.update_snapshot()
    gc.collect()
    after_bound = now()
    for t in pending_texts:
        raw = decode(t)
        store.append(raw)
        sched.handlers.handle("ADDED", "Pod", None, raw)
    gc.collect()
    after_pending = now()
    out["seconds"] = time.perf_counter() - t0
    # the raw dicts alone, for reference (decoded again, not added anywhere)
    gc.collect()
    r0 = now()
    raws = [decode(node_texts[0]) for _ in range(200)]
    r1 = now()
    rawp = [decode(bound_texts[0]) for _ in range(200)]
    r2 = now()
    del raws, rawp
    if method == "tracemalloc":
        tracemalloc.stop()
    out.update(
        bytes_per_node=(after_nodes - base) / max(1, nodes),
        bytes_per_bound_pod=(after_bound - after_nodes) / max(1, pods),
        bytes_per_pending_pod=(after_pending - after_bound) / max(1, pods),
        raw_node_dict_bytes=(r1 - r0) / 200,
        raw_pod_dict_bytes=(r2 - r1) / 200,
        cache_nodes=sched.cache.node_count(),
        cache_pods=sched.cache.pod_count(),
        queue_pending=sched.queue.pending(),
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--method", choices=["tracemalloc", "rss"], default="tracemalloc")
    ap.add_argument("--drop-managed-fields", action="store_true", help="drop metadata.managedFields from each object first (what kube-scheduler's informers do)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    r = measure(a.nodes, a.pods, a.method, a.drop_managed_fields)
    if a.json:
        print(json.dumps(r))
        return 0
    mf = ", managedFields dropped" if a.drop_managed_fields else ""
    print(f"kubesched scheduler state, {a.nodes} nodes, {a.pods} bound + {a.pods} pending pods ({a.method}{mf}):")
    print(f"  per node        {r['bytes_per_node'] / 1024:8.1f} KiB  (raw Node dict alone {r['raw_node_dict_bytes'] / 1024:.1f} KiB)")
    print(f"  per bound pod   {r['bytes_per_bound_pod'] / 1024:8.1f} KiB  (raw Pod dict alone {r['raw_pod_dict_bytes'] / 1024:.1f} KiB)")
    print(f"  per pending pod {r['bytes_per_pending_pod'] / 1024:8.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
