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

**GPU sharing** (``gpu_share=True``, the names of ``kubesched-gpushare``): a GPU pod asks
``alibabacloud.com/gpu-milli`` (request and limit) = ``num_gpu`` x ``gpu_milli`` (a share below
1000 of one GPU, or whole GPUs as multiples of 1000; an empty or 0 ``gpu_milli`` is a whole GPU)
instead of ``nvidia.com/gpu``; a GPU node advertises ``nvidia.com/gpu`` and
``alibabacloud.com/gpu-milli`` = 1000 x ``gpu`` and is labelled
``alibabacloud.com/gpu-card-model: <model>``; ``gpu_spec`` becomes the pod annotation
``alibabacloud.com/gpu-card-model: A|B`` instead of a node affinity.

**The paper's workload** (Weng et al.'s simulator, GitHub ``hkust-adsl/kubernetes-scheduler-simulator``,
pkg/simulator/core.go and simulator.go: ``SortClusterPods``, ``TunePodsByNodeTotalResource``):
``shuffle`` orders the pods by name and shuffles them with ``random.Random(seed)`` (instead of
creation order); ``inflate=RATIO`` then appends copies of pods drawn uniformly (with replacement,
from the pods by name, same generator) named ``<name>-inflate-<i>``, until the next one drawn would
take the GPU request of the workload past RATIO x the GPU capacity of the nodes (1000 per GPU).
Both replace the trace's times: pod ``i`` arrives at second ``i`` and no pod leaves, so each pod
is scheduled (or fails) before the next arrives, as the reference schedules them one by one.
``gpu_nodes_only`` keeps only the nodes with GPUs (the reference's cluster: 1,213 nodes).
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from kubesched.sdk._text import printable, quote

from .workload import ARRIVE_AT, DELETE_AT, RUN_FOR

__all__ = [
    "DEPARTURES",
    "GPU",
    "GPU_CARD_MODEL",
    "GPU_MILLI",
    "GPU_MODEL_LABEL",
    "GPU_SHARE_MILLI",
    "GPU_SPEC",
    "NAMESPACE",
    "NODE_COLUMNS",
    "POD_COLUMNS",
    "QOS",
    "TraceError",
    "convert",
    "dump_yaml",
    "gpu_request",
    "node_object",
    "paper_order",
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
#: GPU sharing (--gpu-share): the extended resource in thousandths of a GPU, the model label / annotation
GPU_SHARE_MILLI = "alibabacloud.com/gpu-milli"
GPU_CARD_MODEL = "alibabacloud.com/gpu-card-model"
MILLI = 1000

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


def node_object(row: dict[str, Any], *, gpu_share: bool = False) -> dict[str, Any]:
    """One Node from a parsed row of the node list."""
    name = row["sn"]
    alloc = {"cpu": f"{row['cpu_milli'] or 0}m", "memory": f"{row['memory_mib'] or 0}Mi", "pods": "110"}
    labels = {"kubernetes.io/hostname": name}
    gpus = row["gpu"]
    if gpus:
        alloc[GPU] = str(gpus)
        if gpu_share:
            alloc[GPU_SHARE_MILLI] = str(MILLI * gpus)
        if row.get("model"):
            labels[GPU_CARD_MODEL if gpu_share else GPU_MODEL_LABEL] = row["model"]
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


def gpu_request(row: dict[str, Any], *, gpu_share: bool = False, source: str = "pods") -> int:
    """The GPU a parsed pod row asks, in thousandths of a GPU: ``num_gpu`` x ``gpu_milli`` with
    ``gpu_share`` (an empty or 0 ``gpu_milli`` counts as 1000), else ``num_gpu`` x 1000 (whole
    ``nvidia.com/gpu``). Raises TraceError (naming ``source``, the file) for a share of more
    than one GPU with ``gpu_share``."""
    gpus = row["num_gpu"] or 0
    if not gpus:
        return 0
    if not gpu_share:
        return MILLI * gpus
    milli = row["gpu_milli"] or MILLI
    if milli >= MILLI:
        return MILLI * gpus
    if gpus > 1:
        raise TraceError(
            f"{source}: pod {quote(row['name'])}: num_gpu {gpus} with gpu_milli {milli}: a share (gpu_milli < 1000) is of one GPU ({GPU_SHARE_MILLI} cannot ask {gpus} shares)"
        )
    return milli


def pod_object(
    row: dict[str, Any],
    *,
    annotate: bool = True,
    departures: str = "delete-at",
    gpu_share: bool = False,
    name: str | None = None,
    arrive_at: int | None = None,
) -> dict[str, Any]:
    """One Pod from a parsed row of the pod list (see the module docstring). ``name`` and
    ``arrive_at`` (seconds) replace the row's name and times (the paper's workload: no departure)."""
    requests = {"cpu": f"{row['cpu_milli'] or 0}m", "memory": f"{row['memory_mib'] or 0}Mi"}
    resources: dict[str, Any] = {"requests": requests}
    gpus = row["num_gpu"]
    if gpus:
        if gpu_share:
            milli = str(gpu_request(row, gpu_share=True))
            requests[GPU_SHARE_MILLI] = milli
            resources["limits"] = {GPU_SHARE_MILLI: milli}
        else:
            requests[GPU] = str(gpus)
            resources["limits"] = {GPU: str(gpus)}
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "img", "resources": resources}]}
    gpu_spec = row.get("gpu_spec") or ""
    models = [m for m in gpu_spec.split("|") if m]
    md: dict[str, Any] = {"name": row["name"] if name is None else name, "namespace": NAMESPACE}
    ann: dict[str, str] = {}
    if models and gpu_share:
        ann[GPU_CARD_MODEL] = "|".join(models)
    elif models:
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": GPU_MODEL_LABEL, "operator": "In", "values": models}]}]
                }
            }
        }
    if annotate and arrive_at is not None:
        ann[ARRIVE_AT] = str(arrive_at)
    elif annotate:
        created = row["creation_time"] or 0
        deleted = row["deletion_time"]
        ann[ARRIVE_AT] = str(created)
        if deleted is not None:
            if departures == "delete-at":
                ann[DELETE_AT] = str(deleted)
            elif departures == "run-for":
                ann[RUN_FOR] = str(max(0, deleted - created))
    if annotate:
        if row["gpu_milli"] is not None:
            ann[GPU_MILLI] = str(row["gpu_milli"])
        if row.get("qos"):
            ann[QOS] = row["qos"]
        if gpu_spec:
            ann[GPU_SPEC] = gpu_spec
    if ann:
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


def paper_order(
    rows: list[dict[str, Any]],
    *,
    seed: int,
    shuffle: bool = False,
    inflate: float | None = None,
    capacity: int = 0,
    gpu_share: bool = False,
) -> list[tuple[str, dict[str, Any]]]:
    """The paper's arrival order of parsed pod rows, as (pod name, row): ``rows`` in their order
    (creation order) or, with ``shuffle``, by name then shuffled; with ``inflate``, followed by
    copies of rows drawn uniformly, as the reference's ``tuneUpPods`` adds them
    (``pkg/simulator/simulator.go``): the copy is added while the total plus the drawn pod's
    GPU *per GPU* stays within ``inflate`` x ``capacity`` (thousandths of a GPU), and the total
    grows by its whole request (so a multi-GPU copy may end above the target by up to its
    other GPUs). ``random.Random(seed)`` draws both."""
    rng = random.Random(seed)
    by_name = sorted(rows, key=lambda r: r["name"])
    if shuffle:
        order = list(by_name)
        rng.shuffle(order)
    else:
        order = list(rows)
    out = [(r["name"], r) for r in order]
    if inflate is None:
        return out
    asks = [gpu_request(r, gpu_share=gpu_share) for r in by_name]
    per_gpu = [a // (r["num_gpu"] or 1) for a, r in zip(asks, by_name, strict=True)]
    total = sum(asks)
    target = inflate * capacity
    i = 0
    while True:
        k = rng.randrange(len(by_name))
        if total + per_gpu[k] > target:
            return out
        total += asks[k]
        out.append((f"{by_name[k]['name']}-inflate-{i}", by_name[k]))
        i += 1


def convert(
    nodes_csv: str | Path,
    pods_csv: str | Path,
    *,
    departures: str | None = None,
    limit: int | None = None,
    annotate: bool = True,
    gpu_share: bool = False,
    gpu_nodes_only: bool = False,
    shuffle: bool = False,
    inflate: float | None = None,
    seed: int | None = None,
) -> list[dict[str, Any]]:
    """Read the trace's two CSV files; return the Nodes (file order), then the Pods ordered by
    ``creation_time`` (stable), the first ``limit`` of them when given. ``departures`` defaults
    to ``delete-at`` (``none`` for the paper's workload: ``shuffle`` / ``inflate``, which need a
    ``seed``). Raises TraceError."""
    paper = shuffle or inflate is not None
    if departures is None:
        departures = "none" if paper else "delete-at"
    if departures not in DEPARTURES:
        raise TraceError(f"departures must be one of {', '.join(DEPARTURES)}, not {quote(departures)}")
    if inflate is not None and not (inflate > 0 and inflate < float("inf")):
        raise TraceError(f"--inflate {inflate:g}: expected a ratio > 0 (1.3: add pods until the GPU requests reach 1.3 x the GPU capacity)")
    if paper and seed is None:
        raise TraceError(f"{'--shuffle' if shuffle else '--inflate'} needs --seed N (the shuffle and the pods added are drawn from it)")
    if seed is not None and not paper:
        raise TraceError(f"--seed {seed}: only --shuffle and --inflate draw from a seed")
    if paper and departures != "none":
        raise TraceError(
            f"--departures {departures}: with --shuffle or --inflate pods arrive one per second in the new order and never leave (--departures none)"
        )
    with _open(nodes_csv) as fn:
        node_rows = list(read_rows(fn, printable(nodes_csv), NODE_COLUMNS, NODE_INTS, "sn"))
    if gpu_nodes_only:
        node_rows = [r for r in node_rows if r["gpu"]]
    out = [node_object(r, gpu_share=gpu_share) for r in node_rows]
    with _open(pods_csv) as fp:
        rows = list(read_rows(fp, printable(pods_csv), POD_COLUMNS, POD_INTS, "name"))
    rows.sort(key=lambda r: r["creation_time"] or 0)
    if limit is not None:
        rows = rows[: max(0, limit)]
    asks = [gpu_request(r, gpu_share=gpu_share, source=printable(pods_csv)) for r in rows]  # checks every share
    if not paper:
        return out + [pod_object(r, annotate=annotate, departures=departures, gpu_share=gpu_share) for r in rows]
    assert seed is not None
    capacity = MILLI * sum(r["gpu"] or 0 for r in node_rows)
    if inflate is not None:
        if capacity == 0:
            raise TraceError(f"--inflate {inflate:g}: the nodes have no GPUs ({printable(nodes_csv)})")
        if not any(asks):
            raise TraceError(f"--inflate {inflate:g}: no pod asks for a GPU ({printable(pods_csv)})")
    order = paper_order(rows, seed=seed, shuffle=shuffle, inflate=inflate, capacity=capacity, gpu_share=gpu_share)
    return out + [pod_object(r, annotate=annotate, gpu_share=gpu_share, name=name, arrive_at=i) for i, (name, r) in enumerate(order)]


def dump_yaml(objs: list[dict[str, Any]], out: TextIO) -> None:
    """Write the objects as a multi-document YAML stream (libyaml's emitter when available)."""
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    yaml.dump_all(objs, out, Dumper=dumper, sort_keys=False, default_flow_style=False)
