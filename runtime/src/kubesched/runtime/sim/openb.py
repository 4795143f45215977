"""The openb production GPU trace as a workload file (``kubesched import openb``).

The trace is Alibaba's ``cluster-trace-gpu-v2023`` (Weng et al., "Beware of Fragmentation:
Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023): a node
list and a pod list, two CSV files. See docs/importers.md for the mapping; in short:

* **Node** per row of the node list, in file order, named ``sn``: ``status.allocatable`` =
  ``status.capacity`` = ``{"cpu": "<cpu_milli>m", "memory": "<memory_mib>Mi", "pods": "110"}``
  plus ``"nvidia.com/gpu": "<gpu>"`` when ``gpu`` > 0; labels ``kubernetes.io/hostname: <sn>``
  plus ``gpu-model: <model>`` when ``gpu`` > 0 and ``model`` is set; one condition
  ``Ready=True``. No taints, no zones.
* **Pod** per row of the pod list, in namespace ``default``, ordered by ``creation_time`` (stable:
  rows of the same time keep their file order; an empty time counts as 0), named ``name``; one
  container ``c`` (image ``img``) whose ``resources.requests`` are ``{"cpu": "<cpu_milli>m",
  "memory": "<memory_mib>Mi"}`` plus ``"nvidia.com/gpu": "<num_gpu>"`` when ``num_gpu`` > 0, in
  which case ``resources.limits`` is ``{"nvidia.com/gpu": "<num_gpu>"}``. A non-empty
  ``gpu_spec`` (``A|B``) becomes a required node affinity ``gpu-model In [A, B]``.
* **Time** (``annotate=True``): ``sim.kubesched.io/arrive-at`` = ``creation_time``; the departure
  by ``departures``: ``delete-at`` = ``deletion_time`` (the default), ``run-for`` =
  ``deletion_time - creation_time``, ``none`` (pods never leave). A pod with an empty
  ``deletion_time`` never leaves. The trace's ``gpu_milli``, ``qos`` and ``gpu_spec`` are kept as
  ``openb.kubesched.io/...`` annotations when non-empty. ``pod_phase`` and ``scheduled_time`` are
  left out.

With ``annotate=False`` the objects carry no annotations: the static cluster bench/openb.py
writes (every pod pending at once, none ever leaves).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from kubesched.sdk._text import printable, quote

from .workload import ARRIVE_AT, DELETE_AT, RUN_FOR

__all__ = [
    "DEPARTURES",
    "GPU",
    "GPU_MILLI",
    "GPU_MODEL_LABEL",
    "GPU_SPEC",
    "NAMESPACE",
    "NODE_COLUMNS",
    "POD_COLUMNS",
    "QOS",
    "TraceError",
    "convert",
    "dump_yaml",
    "node_object",
    "pod_object",
    "read_rows",
]

GPU = "nvidia.com/gpu"
GPU_MODEL_LABEL = "gpu-model"
NAMESPACE = "default"
#: the trace's fields kept for later GPU work (annotations of each Pod, when non-empty)
GPU_MILLI = "openb.kubesched.io/gpu-milli"
QOS = "openb.kubesched.io/qos"
GPU_SPEC = "openb.kubesched.io/gpu-spec"

#: how a pod leaves: at its trace deletion time, after running its trace duration, or never
DEPARTURES = ("delete-at", "run-for", "none")

#: the columns each file must have; the integer ones (an empty cell counts as 0)
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
NODE_INTS = ("cpu_milli", "memory_mib", "gpu")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "creation_time", "deletion_time")
POD_INTS = ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time")


class TraceError(ValueError):
    """Bad trace input, in one line naming the file (and the line and column)."""


def read_rows(f: TextIO, source: str, columns: Iterable[str], ints: Iterable[str], name: str) -> Iterator[dict[str, Any]]:
    """The rows of one CSV file as dicts, the integer columns parsed (an empty cell: None).
    Raises TraceError on a missing column, a non-integer cell or an empty name."""
    reader = csv.DictReader(f)
    header = reader.fieldnames
    if header is None:
        raise TraceError(f"{source}: the file is empty (expected a header line: {', '.join(columns)})")
    missing = [c for c in columns if c not in header]
    if missing:
        raise TraceError(f"{source}:1: no column {quote(missing[0])} in the header (it has: {printable(', '.join(header))[:200]})")
    ints = tuple(ints)
    for row in reader:
        line = reader.line_num
        for c in ints:
            v = row.get(c)
            if v is None or not v.strip():
                row[c] = None
                continue
            try:
                n = int(v)
            except ValueError:
                raise TraceError(f'{source}:{line}: column "{c}": expected an integer, got {quote(v)}') from None
            if n < 0:
                raise TraceError(f'{source}:{line}: column "{c}": expected an integer >= 0, got {quote(v)}')
            row[c] = n
        if not (row.get(name) or "").strip():
            raise TraceError(f'{source}:{line}: column "{name}" is empty')
        yield row


def node_object(row: dict[str, Any]) -> dict[str, Any]:
    """One Node from a parsed row of the node list."""
    name = row["sn"]
    alloc = {"cpu": f"{row['cpu_milli'] or 0}m", "memory": f"{row['memory_mib'] or 0}Mi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name}
    gpus = row["gpu"]
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


def pod_object(row: dict[str, Any], *, annotate: bool = True, departures: str = "delete-at") -> dict[str, Any]:
    """One Pod from a parsed row of the pod list (see the module docstring)."""
    requests = {"cpu": f"{row['cpu_milli'] or 0}m", "memory": f"{row['memory_mib'] or 0}Mi"}
    resources: dict[str, Any] = {"requests": requests}
    gpus = row["num_gpu"]
    if gpus:
        requests[GPU] = str(gpus)
        resources["limits"] = {GPU: str(gpus)}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img", "resources": resources}]}
    gpu_spec = row.get("gpu_spec") or ""
    models = [m for m in gpu_spec.split("|") if m]
    if models:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]}]
                }
            }
        }
    md: dict[str, Any] = {"name": row["name"], "namespace": NAMESPACE}
    if annotate:
        created = row["creation_time"] or 0
        deleted = row["deletion_time"]
        ann = {ARRIVE_AT: str(created)}
        if deleted is not None:
            if departures == "delete-at":
                ann[DELETE_AT] = str(deleted)
            elif departures == "run-for":
                ann[RUN_FOR] = str(max(0, deleted - created))
        if row["gpu_milli"] is not None:
            ann[GPU_MILLI] = str(row["gpu_milli"])
        if row.get("qos"):
            ann[QOS] = row["qos"]
        if gpu_spec:
            ann[GPU_SPEC] = gpu_spec
        md["annotations"] = ann
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}


def _open(path: str | Path) -> TextIO:
    try:
        return open(path, newline="")
    except FileNotFoundError:
        raise TraceError(f"{printable(path)}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{printable(path)}: is a directory, not a CSV file") from None
    except OSError as e:
        raise TraceError(f"{printable(path)}: cannot read: {printable(e.strerror or e)}") from None


def convert(
    nodes_csv: str | Path,
    pods_csv: str | Path,
    *,
    departures: str = "delete-at",
    limit: int | None = None,
    annotate: bool = True,
) -> list[dict[str, Any]]:
    """Read the trace's two CSV files; return the Nodes (file order), then the Pods ordered by
    ``creation_time`` (stable), the first ``limit`` of them when given. Raises TraceError."""
    if departures not in DEPARTURES:
        raise TraceError(f"departures must be one of {', '.join(DEPARTURES)}, not {quote(departures)}")
    with _open(nodes_csv) as fn:
        out = [node_object(r) for r in read_rows(fn, printable(nodes_csv), NODE_COLUMNS, NODE_INTS, "sn")]
    with _open(pods_csv) as fp:
        rows = list(read_rows(fp, printable(pods_csv), POD_COLUMNS, POD_INTS, "name"))
    rows.sort(key=lambda r: r["creation_time"] or 0)
    if limit is not None:
        rows = rows[: max(0, limit)]
    out += [pod_object(r, annotate=annotate, departures=departures) for r in rows]
    return out


def dump_yaml(objs: list[dict[str, Any]], out: TextIO) -> None:
    """Write the objects as a multi-document YAML stream (libyaml's emitter when available)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump_all(objs, out, Dumper=dumper, sort_keys=False, default_flow_style=False)
