"""Convert the openb production GPU trace into a kubesched cluster (a list of Kubernetes objects).

    python bench/openb.py --nodes openb_node_list_all_node.csv --pods openb_pod_list_default.csv -o cluster.yaml

The trace is Alibaba's ``cluster-trace-gpu-v2023`` (Weng et al., "Beware of Fragmentation:
Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023); a copy
with its README is in ``/work/shared/traces/openb/``. The output is a multi-document YAML that
``kubesched simulate`` reads and that bench/trace_gap.py creates on a real control plane.

The mapping (``convert``):

* **Node** per row of the node list, in file order, named ``sn``:
  ``status.allocatable`` = ``status.capacity`` = ``{"cpu": "<cpu_milli>m", "memory":
  "<memory_mib>Mi", "pods": "110"}`` plus ``"nvidia.com/gpu": "<gpu>"`` when ``gpu`` > 0;
  labels ``kubernetes.io/hostname: <sn>`` plus ``gpu-model: <model>`` when ``gpu`` > 0 and
  ``model`` is set; one condition ``Ready=True``. No taints, no zones.
* **Pod** per row of the pod list, in namespace ``default``, ordered by ``creation_time``
  (stable: rows with the same time keep their file order; an empty time counts as 0), named
  ``name``; one container ``c`` (image ``img``) whose ``resources.requests`` are ``{"cpu":
  "<cpu_milli>m", "memory": "<memory_mib>Mi"}`` plus ``"nvidia.com/gpu": "<num_gpu>"`` when
  ``num_gpu`` > 0, in which case ``resources.limits`` is ``{"nvidia.com/gpu": "<num_gpu>"}``
  (an extended resource must have a limit equal to its request); no other limits.
  A non-empty ``gpu_spec`` (``A|B``) becomes a required node affinity
  ``gpu-model In [A, B]`` (one nodeSelectorTerm, one matchExpression).
* Left out: ``gpu_milli`` (a GPU-sharing pod, ``num_gpu`` 1 with ``gpu_milli`` < 1000, asks
  for one whole ``nvidia.com/gpu``: the default plugins have no fractional GPUs), ``qos``,
  ``pod_phase``, ``deletion_time`` and ``scheduled_time`` (every pod is pending at once, none
  ever leaves).
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

GPU = "nvidia.com/gpu"
GPU_MODEL_LABEL = "gpu-model"
NAMESPACE = "default"


def _int(v: str | None) -> int:
    return int(v) if v and v.strip() else 0


def node_object(row: dict[str, str]) -> dict[str, Any]:
    """One Node from a row of the node list (``sn``, ``cpu_milli``, ``memory_mib``, ``gpu``, ``model``)."""
    name = row["sn"]
    alloc = {"cpu": f"{_int(row['cpu_milli'])}m", "memory": f"{_int(row['memory_mib'])}Mi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name}
    gpus = _int(row.get("gpu"))
    if gpus:
        alloc[GPU] = str(gpus)
        if row.get("model"):
            labels[GPU_MODEL_LABEL] = row["model"]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {
            "capacity": dict(alloc),
            "allocatable": dict(alloc),
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_object(row: dict[str, str]) -> dict[str, Any]:
    """One Pod from a row of the pod list (``name``, ``cpu_milli``, ``memory_mib``, ``num_gpu``, ``gpu_spec``)."""
    requests = {"cpu": f"{_int(row['cpu_milli'])}m", "memory": f"{_int(row['memory_mib'])}Mi"}
    resources: dict[str, Any] = {"requests": requests}
    gpus = _int(row.get("num_gpu"))
    if gpus:
        requests[GPU] = str(gpus)
        resources["limits"] = {GPU: str(gpus)}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img", "resources": resources}]}
    models = [m for m in (row.get("gpu_spec") or "").split("|") if m]
    if models:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]}]
                }
            }
        }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": row["name"], "namespace": NAMESPACE}, "spec": spec}


def convert_rows(nodes: Iterable[dict[str, str]], pods: Iterable[dict[str, str]]) -> list[dict[str, Any]]:
    """Nodes (file order), then pods ordered by ``creation_time`` (stable)."""
    out = [node_object(r) for r in nodes]
    out += [pod_object(r) for r in sorted(pods, key=lambda r: _int(r.get("creation_time")))]
    return out


def convert(nodes_csv: str | Path, pods_csv: str | Path) -> list[dict[str, Any]]:
    """Read the trace's two CSV files; return the Node and Pod objects (see the module docstring)."""
    with open(nodes_csv, newline="") as fn, open(pods_csv, newline="") as fp:
        return convert_rows(csv.DictReader(fn), csv.DictReader(fp))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", required=True, help="the node list CSV (openb_node_list_all_node.csv)")
    ap.add_argument("--pods", required=True, help="the pod list CSV (openb_pod_list_default.csv)")
    ap.add_argument("-o", "--output", default="-", help="cluster YAML to write (default: stdout)")
    ap.add_argument("--limit", type=int, default=None, help="keep only the first N pods (creation order)")
    a = ap.parse_args(argv)
    import yaml

    objs = convert(a.nodes, a.pods)
    if a.limit is not None:
        nodes = [o for o in objs if o["kind"] == "Node"]
        objs = nodes + [o for o in objs if o["kind"] == "Pod"][: a.limit]
    if a.output == "-":
        yaml.safe_dump_all(objs, sys.stdout, sort_keys=False)
    else:
        with open(a.output, "w") as f:
            yaml.safe_dump_all(objs, f, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
