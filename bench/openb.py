"""Convert the openb production GPU trace into a kubesched cluster (a list of Kubernetes objects).

    python bench/openb.py --nodes openb_node_list_all_node.csv --pods openb_pod_list_default.csv -o cluster.yaml

The trace is Alibaba's ``cluster-trace-gpu-v2023`` (Weng et al., "Beware of Fragmentation:
Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023); a copy
with its README is in ``/work/shared/traces/openb/``. The output is a multi-document YAML that
``kubesched simulate`` reads and that bench/trace_gap.py creates on a real control plane.

The mapping is that of ``kubesched import openb`` (``kubesched.runtime.sim.openb``, see
docs/importers.md) without its time and trace annotations (``annotate=False``):

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
  ever leaves; ``kubesched import openb`` keeps the times and the trace's fields as annotations).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kubesched.runtime.sim.openb import GPU, GPU_MODEL_LABEL, NAMESPACE, TraceError, dump_yaml
from kubesched.runtime.sim.openb import convert as _convert

__all__ = ["GPU", "GPU_MODEL_LABEL", "NAMESPACE", "convert", "main"]


def convert(nodes_csv: str | Path, pods_csv: str | Path, limit: int | None = None) -> list[dict[str, Any]]:
    """Read the trace's two CSV files; return the Node and Pod objects (see the module docstring)."""
    return _convert(nodes_csv, pods_csv, limit=limit, annotate=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--nodes", required=True, help="the node list CSV (openb_node_list_all_node.csv)")
    ap.add_argument("--pods", required=True, help="the pod list CSV (openb_pod_list_default.csv)")
    ap.add_argument("-o", "--output", default="-", help="cluster YAML to write (default: stdout)")
    ap.add_argument("--limit", type=int, default=None, help="keep only the first N pods (creation order)")
    a = ap.parse_args(argv)
    try:
        objs = convert(a.nodes, a.pods, a.limit)
    except TraceError as e:
        print(f"openb.py: error: {e}", file=sys.stderr)
        return 2
    if a.output == "-":
        dump_yaml(objs, sys.stdout)
    else:
        with open(a.output, "w") as f:
            dump_yaml(objs, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
