"""The per-device GPU model: what a pod asks, what a node has, which devices are free.

Semantics of the paper's simulator (``hkust-adsl/kubernetes-scheduler-simulator``) and the
open-gpu-share scheduler it uses: ``pkg/type/open-gpu-share/cache/gpunodeinfo.go`` and
``deviceinfo.go`` (a node's devices, each device's used milli summed over the pods whose
``gpu-index`` names it; pods Succeeded or Failed do not count), ``pkg/type/resource.go``
(``AllocateExclusiveGpuId``: whole GPUs are the lowest-index fully free devices) and
``pkg/simulator/plugin/open_gpu_share.go`` (``allocateGpuIdBasedOnBestFit``: a share goes to
the device with the least milli left that still holds it, the lowest index on ties).

Names (open-gpu-share's, and NVIDIA's device plugin):

* ``alibabacloud.com/gpu-milli`` (:data:`GPU_MILLI`), an extended resource: a pod asks
  ``< 1000`` for a share of one GPU, or a multiple of 1000 for that many whole GPUs; a node
  advertises ``1000 x GPUs``.
* ``nvidia.com/gpu`` (:data:`GPU_RESOURCE`): N whole GPUs; a node's GPU count is its allocatable
  ``nvidia.com/gpu`` (``gpu-milli / 1000`` when only that is advertised).
* ``alibabacloud.com/gpu-card-model`` (:data:`GPU_MODEL`): the node's model label (the plugin's
  ``modelLabel`` arg may name another, e.g. GFD's ``nvidia.com/gpu.product``), and the pod
  annotation ``A|B`` listing the models it accepts (empty or absent: any).
* ``alibabacloud.com/gpu-index`` (:data:`GPU_INDEX`): the pod annotation with the devices chosen
  for it, ``0`` or ``0-1-3``.

The devices of a pod on a node are, in this order: the :class:`Ledger`'s entry (pods this
scheduler reserved on that node whose annotation it has not seen yet: a pending pod may carry a
stale annotation from a bind that failed), else its ``gpu-index`` annotation when it is valid
(indices below the node's GPU count, distinct, as many as the pod asks GPUs), else
they are assigned with :func:`choose_devices`, in ``node_info.pods`` order, after every pod with
known devices is counted (a pod bound by someone else). An invalid annotation is ignored as if
absent. A pod whose devices do not fit (an overcommitted node) gets none. A bound pod with an
invalid GPU spec takes no GPU. A device's milli left is ``1000`` minus what its pods use, never
below 0.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kubesched.sdk import NodeColumns, NodeInfo, Pod
from kubesched.sdk._text import quote
from kubesched.sdk.quantity import QuantityError, parse_quantity

__all__ = [
    "DEFAULT_MODEL_LABEL",
    "DEVICE_HINT",
    "GPU_INDEX",
    "GPU_MILLI",
    "GPU_MODEL",
    "GPU_RESOURCE",
    "MILLI",
    "GpuColumns",
    "GpuRequest",
    "GpuSpecError",
    "Ledger",
    "NodeGpus",
    "choose_devices",
    "fits",
    "format_devices",
    "gpu_columns",
    "gpu_request",
    "node_gpus",
    "parse_devices",
]

#: thousandths of one GPU
MILLI = 1000
#: the pod's GPU in thousandths (extended resource); nodes advertise ``1000 x GPUs``
GPU_MILLI = "alibabacloud.com/gpu-milli"
#: whole GPUs (NVIDIA's device plugin)
GPU_RESOURCE = "nvidia.com/gpu"
#: the node's GPU model (label) and the pod's allowed models (annotation ``A|B``)
GPU_MODEL = "alibabacloud.com/gpu-card-model"
#: the devices chosen for a pod (annotation, ``0`` or ``0-1-3``)
GPU_INDEX = "alibabacloud.com/gpu-index"
#: the ``modelLabel`` arg's default
DEFAULT_MODEL_LABEL = GPU_MODEL
#: CycleState key: ``{node name: devices}`` a Score policy chose; GpuShare's Reserve uses the
#: entry for its node when those devices still hold the pod, else :func:`choose_devices`
DEVICE_HINT = "gpushare.kubesched.io/devices"

_SEP = "-"
_INDEX_RE = re.compile(r"^[0-9]{1,6}(-[0-9]{1,6})*$")
_CACHE_KEY = "_kubesched_gpushare_request"
_TERMINAL = ("Succeeded", "Failed")


class GpuSpecError(ValueError):
    """A pod's GPU request that can not be served; the message is the user's text (the pod's
    FailedScheduling event)."""


@dataclass(frozen=True, slots=True)
class GpuRequest:
    """What a pod asks: ``count`` GPUs of ``milli`` thousandths each (a share is one GPU with
    ``milli < 1000``), on a GPU of one of ``models`` (empty: any)."""

    count: int
    milli: int
    models: frozenset[str] = frozenset()

    @property
    def share(self) -> bool:
        """A share of one GPU (``milli < 1000``)."""
        return self.milli < MILLI

    @property
    def total(self) -> int:
        """The milli asked over all GPUs (``count x milli``)."""
        return self.count * self.milli


def _parse_models(value: Any) -> frozenset[str]:
    if not isinstance(value, str) or not value.strip():
        return frozenset()
    parts = [p.strip() for p in value.split("|")]
    if any(not p for p in parts):
        raise GpuSpecError(
            f"invalid GPU request: annotation {GPU_MODEL} {quote(value)}: a GPU model between \"|\" is empty"
        )
    return frozenset(parts)


def _check_whole(pod: Pod) -> None:
    """The API server accepts only whole numbers for extended resources ("must be an integer"):
    a fraction of a thousandth (``1.5``, ``500m``) is refused here too, not rounded."""
    for c in (*pod.containers, *pod.init_containers):
        res = c.get("resources")
        if not isinstance(res, Mapping):
            continue
        for kind in ("requests", "limits"):
            given = res.get(kind)
            if not isinstance(given, Mapping):
                continue
            for name in (GPU_MILLI, GPU_RESOURCE):
                v = given.get(name)
                if v is None:
                    continue
                try:
                    whole = parse_quantity(v).denominator == 1
                except QuantityError:
                    whole = False
                if not whole:
                    raise GpuSpecError(
                        f"invalid GPU request: {name} is {quote(str(v))}; it must be a whole number"
                    )


def _parse_request(pod: Pod) -> GpuRequest | None:
    scalar = pod.requests.scalar
    milli = scalar.get(GPU_MILLI, 0)
    gpus = scalar.get(GPU_RESOURCE, 0)
    if not milli and not gpus:
        return None
    _check_whole(pod)
    if milli and gpus:
        raise GpuSpecError(
            f"invalid GPU request: the pod asks for both {GPU_RESOURCE} and {GPU_MILLI}; ask for one of them"
        )
    if gpus:
        count, per = gpus, MILLI
    elif milli < MILLI:
        count, per = 1, milli
    elif milli % MILLI == 0:
        count, per = milli // MILLI, MILLI
    else:
        raise GpuSpecError(
            f"invalid GPU request: {GPU_MILLI} is {milli}; it must be below {MILLI} (a share of one GPU) "
            f"or a multiple of {MILLI} (whole GPUs)"
        )
    return GpuRequest(count, per, _parse_models(pod.annotations.get(GPU_MODEL)))


def gpu_request(pod: Pod) -> GpuRequest | None:
    """The pod's GPU request (None: it asks for no GPU), from its effective requests (limits
    where a request is missing) of :data:`GPU_MILLI` / :data:`GPU_RESOURCE` and its
    :data:`GPU_MODEL` annotation. Raises :class:`GpuSpecError` for a request that is neither a
    share (``1..999``) nor whole GPUs (a multiple of 1000 / ``nvidia.com/gpu``), for both
    resources at once, and for a model list with an empty entry. Parsed once per pod object (a
    view is immutable: the result is kept beside the view's own cached parts)."""
    d = pod.__dict__
    r = d.get(_CACHE_KEY, d)
    if r is d:
        try:
            r = _parse_request(pod)
        except GpuSpecError as e:
            r = e
        d[_CACHE_KEY] = r
    if isinstance(r, GpuSpecError):
        raise r
    return r  # type: ignore[no-any-return]


def format_devices(devices: Iterable[int]) -> str:
    """``(0, 1, 3)`` -> ``"0-1-3"`` (the :data:`GPU_INDEX` annotation)."""
    return _SEP.join(map(str, devices))


def parse_devices(value: Any, count: int, want: int) -> tuple[int, ...] | None:
    """The devices in a :data:`GPU_INDEX` annotation, or None when it is not valid for a pod
    asking ``want`` GPUs on a node with ``count``: decimal indices joined by ``-``, each below
    ``count``, distinct, ``want`` of them."""
    if not isinstance(value, str) or not _INDEX_RE.match(value):
        return None
    devices = tuple(int(x) for x in value.split(_SEP))
    if len(devices) != want or len(set(devices)) != want or max(devices) >= count:
        return None
    return devices


def fits(left: Sequence[int], req: GpuRequest) -> bool:
    """Whether the devices with ``left`` milli free can hold ``req``: a share needs one device
    with at least ``milli`` left, whole GPUs need ``count`` fully free devices."""
    if req.share:
        m = req.milli
        return any(x >= m for x in left)
    return sum(1 for x in left if x >= MILLI) >= req.count


def choose_devices(left: Sequence[int], req: GpuRequest) -> tuple[int, ...] | None:
    """The devices best fit for ``req`` (None: it does not fit): a share goes to the device with
    the least milli left that still holds it (the lowest index on ties:
    ``allocateGpuIdBasedOnBestFit``); whole GPUs to the lowest-index fully free devices
    (``AllocateExclusiveGpuId``)."""
    if req.share:
        m = req.milli
        best = -1
        for i, x in enumerate(left):
            if x >= m and (best < 0 or x < left[best]):
                best = i
        return (best,) if best >= 0 else None
    free = [i for i, x in enumerate(left) if x >= MILLI]
    return tuple(free[: req.count]) if len(free) >= req.count else None


@dataclass(frozen=True, slots=True)
class NodeGpus:
    """A node's GPUs: ``count`` devices of ``model`` ('' when the node has no model label),
    ``left[i]`` milli free on device ``i``, and the devices of each GPU pod on the node by uid."""

    count: int
    model: str
    left: tuple[int, ...]
    devices: Mapping[str, tuple[int, ...]]


class Ledger:
    """The devices this scheduler reserved for pods whose :data:`GPU_INDEX` annotation it has not
    seen yet (uid -> node and devices), one per Handle (:meth:`of`). A new scheduler starts with
    an empty one: bound pods carry the annotation, so the devices are rebuilt from them.

    It also keeps :func:`node_gpus`' results per node (by NodeInfo generation and the node's
    entries here) and the :class:`GpuColumns` built over it."""

    _by_handle: weakref.WeakKeyDictionary[Any, Ledger] = weakref.WeakKeyDictionary()

    def __init__(self) -> None:
        self._entries: dict[str, tuple[str, tuple[int, ...]]] = {}
        #: node -> how many times its entries changed
        self._versions: dict[str, int] = {}
        #: node -> (generation, version, model label, NodeGpus)
        self._nodes: dict[str, tuple[int, int, str, NodeGpus]] = {}
        #: model label -> GpuColumns
        self._columns: dict[str, GpuColumns] = {}

    @classmethod
    def of(cls, handle: Any) -> Ledger:
        """The Ledger of ``handle`` (the plugins of one profile share it)."""
        ledger = cls._by_handle.get(handle)
        if ledger is None:
            ledger = cls._by_handle[handle] = cls()
        return ledger

    def _touch(self, node: str) -> None:
        self._versions[node] = self._versions.get(node, 0) + 1
        for gc in list(self._columns.values()):  # Unreserve may run on a binding thread
            gc._dirty.add(node)

    def record(self, uid: str, node: str, devices: tuple[int, ...]) -> None:
        """The pod ``uid`` was reserved on ``devices`` of ``node``."""
        old = self._entries.get(uid)
        self._entries[uid] = (node, tuple(devices))
        if old is not None and old[0] != node:
            self._touch(old[0])
        self._touch(node)

    def forget(self, uid: str) -> None:
        """The pod's reservation was undone (Unreserve)."""
        old = self._entries.pop(uid, None)
        if old is not None:
            self._touch(old[0])

    def get(self, uid: str) -> tuple[str, tuple[int, ...]] | None:
        """``(node, devices)`` recorded for the pod, or None."""
        return self._entries.get(uid)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, uid: object) -> bool:
        return uid in self._entries


def _node_count(node_info: NodeInfo) -> int:
    scalar = node_info.allocatable.scalar
    n = scalar.get(GPU_RESOURCE, 0)
    if n <= 0:
        n = scalar.get(GPU_MILLI, 0) // MILLI
    return max(0, int(n))


def _compute(node_info: NodeInfo, ledger: Ledger, model_label: str) -> NodeGpus:
    count = _node_count(node_info)
    model = node_info.node.labels.get(model_label, "") if node_info.node is not None else ""
    if not isinstance(model, str):
        model = ""
    used = [0] * count
    devices: dict[str, tuple[int, ...]] = {}
    if count:
        name = node_info.name
        unknown: list[tuple[Pod, GpuRequest]] = []
        entries = ledger._entries
        for p in node_info.pods:
            if p.phase in _TERMINAL:
                continue
            try:
                req = gpu_request(p)
            except GpuSpecError:
                continue
            if req is None:
                continue
            uid = p.uid
            devs = None
            # this scheduler's own reservation first: a pending pod may carry a stale annotation
            # (PreBind wrote it, then the bind failed or the scheduler restarted)
            e = entries.get(uid)
            if e is not None and e[0] == name and parse_devices(format_devices(e[1]), count, req.count):
                devs = e[1]
            seen = parse_devices(p.annotations.get(GPU_INDEX), count, req.count)
            if devs is None:
                devs = seen
            elif seen == devs:
                # the annotation of this reservation is seen: it governs from now on (same result)
                entries.pop(uid, None)
            if devs is None:
                unknown.append((p, req))
                continue
            devices[uid] = devs
            for d in devs:
                used[d] += req.milli
        for p, req in unknown:
            devs = choose_devices([max(0, MILLI - u) for u in used], req)
            if devs is None:
                continue
            devices[p.uid] = devs
            for d in devs:
                used[d] += req.milli
    return NodeGpus(count, model, tuple(max(0, MILLI - u) for u in used), devices)


def node_gpus(node_info: NodeInfo, ledger: Ledger, model_label: str = DEFAULT_MODEL_LABEL) -> NodeGpus:
    """The node's GPUs and their use by ``node_info.pods`` (see the module docstring); computed
    once per NodeInfo generation and change of the node's Ledger entries."""
    name = node_info.name
    gen = node_info.generation
    ver = ledger._versions.get(name, 0)
    hit = ledger._nodes.get(name)
    if hit is not None and hit[0] == gen and hit[1] == ver and hit[2] == model_label:
        return hit[3]
    ng = _compute(node_info, ledger, model_label)
    ledger._nodes[name] = (gen, ver, model_label, ng)
    return ng


_I64 = np.int64


class GpuColumns:
    """The GPUs of the snapshot's nodes as numpy columns, row ``i`` the ``i``-th row of
    ``columns`` (:class:`kubesched.sdk.NodeColumns`):

    * ``left`` ``(N, W)`` int64: milli free per device (``W`` the largest GPU count, at least 1;
      devices past a node's count are 0);
    * ``count`` ``(N,)``: GPUs per node;
    * ``codes`` ``(N,)`` int32 and ``models``: node ``i``'s model is ``models[codes[i]]`` ('' for
      a node without one);
    * ``cpu_left`` ``(N,)``: allocatable minus requested millicores; ``cpu_capacity`` ``(N,)``:
      allocatable millicores.

    Rows are rebuilt only for nodes whose NodeInfo generation (or Ledger entries) changed.
    The arrays are read-only and replaced, not changed, when rows change: keep no reference
    across pods."""

    __slots__ = (
        "_dirty",
        "_gens",
        "_ledger",
        "_model_codes",
        "_version",
        "codes",
        "columns",
        "count",
        "cpu_capacity",
        "cpu_left",
        "left",
        "model_label",
        "models",
        "rows",
    )

    def __init__(self, columns: NodeColumns, ledger: Ledger, model_label: str) -> None:
        self.columns = columns
        self._ledger = ledger
        self.model_label = model_label
        self._dirty: set[str] = set()
        n = len(columns)
        #: the NodeGpus of each row
        self.rows: list[NodeGpus] = [node_gpus(ni, ledger, model_label) for ni in columns.infos]
        self._gens = np.array(columns.generations, dtype=_I64)
        self.models: list[str] = []
        self._model_codes: dict[str, int] = {}
        self.count = np.zeros(n, _I64)
        self.codes = np.zeros(n, np.int32)
        self.left = np.zeros((n, 1), _I64)
        self._build(range(n))
        self._version = -1
        self._sync_cpu()

    def _code(self, model: str) -> int:
        c = self._model_codes.get(model)
        if c is None:
            c = self._model_codes[model] = len(self.models)
            self.models.append(model)
        return c

    def _build(self, rows: Iterable[int]) -> None:
        rows = list(rows)
        if not rows:
            return
        width = max([self.left.shape[1], *(self.rows[i].count for i in rows)])
        left = np.zeros((len(self.rows), width), _I64)
        left[:, : self.left.shape[1]] = self.left
        count = self.count.copy()
        codes = self.codes.copy()
        for i in rows:
            ng = self.rows[i]
            left[i, :] = 0
            left[i, : ng.count] = ng.left
            count[i] = ng.count
            codes[i] = self._code(ng.model)
        for a in (left, count, codes):
            a.flags.writeable = False
        self.left, self.count, self.codes = left, count, codes

    def _sync_cpu(self) -> None:
        c = self.columns
        if c.version == self._version:
            return
        alloc = c.allocatable("cpu")
        cpu_left = alloc - c.requested("cpu")
        cap = np.array(alloc, dtype=_I64)
        cpu_left.flags.writeable = False
        cap.flags.writeable = False
        self.cpu_left, self.cpu_capacity = cpu_left, cap
        self._version = c.version

    def _sync(self) -> None:
        c = self.columns
        if c.version == self._version and not self._dirty:
            return  # no row written since the last pod (NodeColumns.refresh bumps the version)
        gens = c.generations
        changed = set(np.flatnonzero(gens != self._gens).tolist())
        if self._dirty:
            # swapped, not cleared: Unreserve on a binding thread may add to it meanwhile
            dirty, self._dirty = self._dirty, set()
            index = c.index
            changed.update(index[n] for n in dirty if n in index)
        if changed:
            infos = c.infos
            for i in changed:
                self.rows[i] = node_gpus(infos[i], self._ledger, self.model_label)
            self._gens = np.array(gens, dtype=_I64)
            self._build(sorted(changed))
        self._sync_cpu()

    def allowed(self, models: frozenset[str]) -> NDArray[np.bool_]:
        """Per node: its model is one of ``models`` (all True for an empty set)."""
        if not models:
            return np.ones(len(self.rows), np.bool_)
        ok = [i for i, m in enumerate(self.models) if m in models]
        return np.isin(self.codes, ok)

    def __len__(self) -> int:
        return len(self.rows)


def gpu_columns(columns: NodeColumns, ledger: Ledger, model_label: str = DEFAULT_MODEL_LABEL) -> GpuColumns:
    """The :class:`GpuColumns` over ``columns``, kept in the Ledger and brought up to date (only
    the rows whose node changed are rebuilt)."""
    gc = ledger._columns.get(model_label)
    if gc is None or gc.columns is not columns or len(gc.rows) != len(columns):
        gc = GpuColumns(columns, ledger, model_label)
        ledger._columns[model_label] = gc
        return gc
    gc._sync()
    return gc
