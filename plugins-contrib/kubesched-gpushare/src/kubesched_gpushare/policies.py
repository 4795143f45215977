"""The GPU placement policies of Weng et al. (USENIX ATC 2023) as Score plugins.

Each ports one Score plugin of the paper's simulator (``hkust-adsl/kubernetes-scheduler-simulator``,
``pkg/simulator/plugin/*.go``), under the reference's plugin name (``pkg/type/const.go``):
``RandomScore``, ``DotProductScore``, ``GpuClusteringScore``, ``GpuPackingScore``,
``BestFitScore``, ``FGDScore``. Each has the per-node ``score`` (the reference) and a
``score_columns`` form over :func:`~kubesched_gpushare.model.gpu_columns` that gives the same
integers (tests/test_policies_*.py compare them on random clusters); ``BestFitScore`` also has the
reference's min-max ``normalize_score``.

What a node is to a policy (the reference's ``NodeResource``, ``GetNodeResourceViaNodeInfo``):
``cpu_left`` = allocatable cpu minus the requests of the node's pods (millicores), ``left`` = the
GPU milli left per device (:func:`~kubesched_gpushare.model.node_gpus`), its GPU model. A pod
(``GetPodResource``): cpu = the sum over its containers of the cpu request (100m for a container
without one), its GPU request (:func:`~kubesched_gpushare.model.gpu_request`: milli per GPU and
count) and allowed models. Memory is in neither: the reference's vectors are (cpu, GPU) only.

Where the reference returns an Error (a node whose GPU model the pod does not accept, a pod that
does not fit: GpuShare's Filter has removed such nodes before Score), these return 0, so the
policies can also be used without GpuShare's Filter without failing every cycle.

Device choice: the reference's GpuShare picks devices at Reserve with the policy's
``gpuSelMethod``: best fit for DotProduct (``-gpusel best``), GpuClustering, GpuPacking and
BestFit (the default), which is what GpuShare's Reserve does without a hint; a random fitting
device for Random (``-gpusel random``) and the fragmentation-minimising device for FGD
(``-gpusel FGDScore``). Those two write their choice into CycleState under
:data:`~kubesched_gpushare.model.DEVICE_HINT` (``{node name: devices}``), which GpuShare's Reserve
uses for the node it reserves.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from kubesched.sdk import (
    CycleState,
    Handle,
    NodeColumns,
    NodeInfo,
    NodeScore,
    Pod,
    Status,
    hookimpl,
)
from kubesched.sdk.quantity import QuantityError, milli_value

from . import model
from .frag import TypicalSet, node_frag_score
from .typical import DEFAULT_MILLI_CPU_REQUEST, MILLI, PodResource, TypicalPod, typical_pods

__all__ = [
    "MAX_NODE_SCORE",
    "MAX_SPEC_CPU",
    "MAX_SPEC_GPU",
    "BestFitScore",
    "DotProductScore",
    "FGDScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "RandomScore",
]

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
#: ``MaxSpecCpu`` / ``MaxSpecGpu`` (pkg/type/open-gpu-share/utils/const.go): the normalisers
MAX_SPEC_CPU = 128000
MAX_SPEC_GPU = 8000

_I64 = np.int64
_F64 = np.float64
_POD_KEY = "gpushare.kubesched.io/pod-resource"


# the pod and the node as the reference sees them ----------------------------------------------
@dataclass(frozen=True, slots=True)
class _Pod:
    cpu: int  # non-zero cpu request, millicores
    milli: int  # GPU milli per GPU (0: no GPU)
    count: int  # GPUs (0: no GPU)
    models: frozenset[str]
    requests_any: bool  # the pod requests any resource (FGD scores a pod without requests 100)

    @property
    def share(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    @property
    def total(self) -> int:
        return self.milli * self.count

    @property
    def key(self) -> tuple[int, int, int, frozenset[str]]:
        return (self.cpu, self.milli, self.count, self.models)

    @property
    def resource(self) -> PodResource:
        return PodResource(self.cpu, self.milli, self.count, "|".join(sorted(self.models)))

    def tag(self) -> str | None:
        """``GetGpuAffinityFromPodAnnotation``: None (no GPU), ``share-gpu`` or ``<n>-gpu``."""
        return _tag(self.count, self.milli)


def _tag(count: int, milli: int) -> str | None:
    if count == 0:
        return None
    if count == 1 and milli < MILLI:
        return "share-gpu"
    return f"{count}-gpu"


def _cpu_request(pod: Pod) -> tuple[int, bool]:
    total = 0
    any_request = False
    for c in pod.containers:
        req = (c.get("resources") or {}).get("requests") or {}
        if req:
            any_request = True
        if "cpu" in req:
            total += _milli(req["cpu"])
        else:
            total += DEFAULT_MILLI_CPU_REQUEST
    return total, any_request


def _milli(q: Any) -> int:
    try:
        return milli_value(q)
    except QuantityError:
        return 0


def _pod_of(state: CycleState, pod: Pod) -> _Pod:
    got = state.get(_POD_KEY)
    if got is None or got[0] is not pod:
        got = (pod, _make_pod(pod))
        state.write(_POD_KEY, got)
    return got[1]


def _make_pod(pod: Pod) -> _Pod:
    cpu, any_request = _cpu_request(pod)
    try:
        req = model.gpu_request(pod)
    except model.GpuSpecError:
        req = None
    if req is None:
        return _Pod(cpu, 0, 0, frozenset(), any_request)
    return _Pod(cpu, req.milli, req.count, frozenset(req.models), True)


def _node_accessible(node_model: str, pod: _Pod) -> bool:
    """``IsNodeAccessibleToPod``: the pod names no model, or the node's is one of them."""
    return not pod.models or (bool(node_model) and node_model in pod.models)


@dataclass
class PolicyArgs:
    """Args every policy takes: ``modelLabel``, the node label with the GPU model (as GpuShare's);
    ``tieBreak``: ``random`` (kube-scheduler: among the nodes with the highest score, one at
    random) or ``name``: the node first in a fixed order, as the paper's simulator decides (its
    kube-scheduler fork, ``mental2008/kubernetes`` v1.20.5-minor, ``selectHost`` in
    pkg/scheduler/core/generic_scheduler.go, takes the smallest node name among equal scores,
    the names prefixed with a seeded random permutation, ``%04d-``, in simulator.go
    ``syncClusterResourceList``); ``tieBreakSeed``: that order is by name when absent, else a
    permutation drawn from the seed (``blake2b(seed/name)``, then the name)."""

    model_label: str = model.GPU_MODEL
    tie_break: Literal["random", "name"] = "random"
    tie_break_seed: int | None = None

    def validate(self) -> None:
        if not self.model_label:
            raise ValueError("modelLabel: must not be empty")


class _Policy:
    Args: Any = PolicyArgs
    name = ""

    def __init__(self, args: PolicyArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.ledger = model.Ledger.of(handle)
        self.model_label = args.model_label
        self._by_name = args.tie_break == "name"
        self._tie_seed = args.tie_break_seed
        self._tie_keys: dict[str, tuple[bytes, str]] = {}
        self._tie_names: Any = None
        self._tie_rank: NDArray[np.int64] = np.zeros(0, _I64)
        self._tie_rows: NDArray[np.intp] | None = None

    # tieBreak: name ------------------------------------------------------------------------------
    def _tie_key(self, name: str) -> tuple[bytes, str]:
        key = self._tie_keys.get(name)
        if key is None:
            seed = self._tie_seed
            digest = b"" if seed is None else hashlib.blake2b(f"{seed}/{name}".encode(), digest_size=8).digest()
            key = self._tie_keys[name] = (digest, name)
        return key

    def _remember_rows(self, columns: NodeColumns, rows: Any) -> None:
        """The rows score_columns scored, for normalize_score_columns (called next, same cycle)."""
        if not self._by_name:
            return
        names = columns.names
        if self._tie_names is not names or len(self._tie_rank) != len(names):
            order = sorted(range(len(names)), key=lambda i: self._tie_key(names[i]))
            rank = np.empty(len(names), _I64)
            rank[np.asarray(order, np.intp)] = np.arange(len(names), dtype=_I64)
            self._tie_names, self._tie_rank = names, rank
        self._tie_rows = np.asarray(rows, np.intp)

    def _break_ties(self, scores: list[NodeScore]) -> None:
        """``tieBreak: name`` on NodeScore lists: the first node (in the tie order) of those with
        the highest score ends alone at the top: +1, or the others -1 when the top is 100."""
        if not self._by_name or len(scores) < 2:
            return
        top = max(s.score for s in scores)
        tied = [s for s in scores if s.score == top]
        if len(tied) < 2:
            return
        first = min(tied, key=lambda s: self._tie_key(s.name))
        if top < MAX_NODE_SCORE:
            first.score += 1
        else:
            for s in tied:
                if s is not first:
                    s.score -= 1

    def _break_ties_columns(self, scores: NDArray[np.int64]) -> NDArray[np.int64]:
        out = np.array(scores, _I64, copy=True)
        rows = self._tie_rows
        if not self._by_name or len(out) < 2 or rows is None or len(rows) != len(out):
            return out
        top = int(out.max())
        tied = np.flatnonzero(out == top)
        if len(tied) < 2:
            return out
        first = tied[int(np.argmin(self._tie_rank[rows[tied]]))]
        if top < MAX_NODE_SCORE:
            out[first] += 1
        else:
            out[tied] -= 1
            out[first] += 1
        return out

    @hookimpl
    def normalize_score(self, scores: list[NodeScore]) -> None:
        self._break_ties(scores)
        return None

    @hookimpl
    def normalize_score_columns(self, scores: NDArray[np.int64]) -> NDArray[np.int64]:
        return self._break_ties_columns(scores)

    # a node per node (the reference) and every node (the column forms) -----------------------
    def _node(self, ni: NodeInfo) -> tuple[int, tuple[int, ...], str]:
        g = model.node_gpus(ni, self.ledger, self.model_label)
        return ni.allocatable.milli_cpu - ni.requested.milli_cpu, tuple(g.left), g.model

    def _cols(self, columns: NodeColumns, rows: NDArray[np.intp]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """cpu_left ``(R,)`` and left ``(R, W)`` of ``rows``."""
        gc = model.gpu_columns(columns, self.ledger, self.model_label)
        return gc.cpu_left[rows], gc.left[rows]

    def _access(self, columns: NodeColumns, rows: NDArray[np.intp], pod: _Pod) -> NDArray[np.bool_]:
        """Per row: the node's model is one the pod accepts."""
        if not pod.models:
            return np.ones(len(rows), bool)
        return model.gpu_columns(columns, self.ledger, self.model_label).allowed(pod.models)[rows]


# Random ----------------------------------------------------------------------------------------
@dataclass
class RandomScoreArgs(PolicyArgs):
    """``seed``: the seed of this plugin's random source (each profile's plugin has its own,
    so a run is reproducible; vary it between runs)."""

    seed: int = 0


_RANDOM_KEY = "PreScoreRandomScore"


class RandomScore(_Policy):
    """``RandomScore`` (pkg/simulator/plugin/random_score.go): PreScore draws one of the feasible
    nodes uniformly (``rand.Intn(len(nodes))``); Score gives it 100 and every other node 0.

    For a GPU share, the device is drawn too, as the reference's ``-gpusel random``
    (``allocateGpuIdBasedOnRandomFit`` in open_gpu_share.go: reservoir sampling over the devices
    with ``left >= milli``, in index order) and written as the device hint for that node; whole
    GPUs take the lowest-index free ones (``AllocateExclusiveGpuId``), GpuShare's default.
    The random source is ``random.Random(seed)`` (arg ``seed``), not Go's, so the draws differ
    from the reference's while having its distribution."""

    Args = RandomScoreArgs
    name = "RandomScore"

    def __init__(self, args: RandomScoreArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.rng = random.Random(args.seed)

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: Any) -> Status | None:
        n = len(nodes)
        if n == 0:
            return None
        ni = nodes[self.rng.randrange(n)]
        state.write(_RANDOM_KEY, ni.name)
        p = _pod_of(state, pod)
        if p.share:
            _, left, _ = self._node(ni)
            chosen = -1
            seen = 0
            for i, v in enumerate(left):
                if v >= p.milli:
                    seen += 1
                    if self.rng.randrange(seen) == 0:
                        chosen = i
            if chosen >= 0:
                _hint_dict(state)[ni.name] = (chosen,)
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return MAX_NODE_SCORE if node_info.name == state.get(_RANDOM_KEY) else MIN_NODE_SCORE

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> NDArray[np.int64]:
        self._remember_rows(columns, rows)
        i = columns.index.get(state.get(_RANDOM_KEY) or "", -1)
        return np.where(rows == i, MAX_NODE_SCORE, MIN_NODE_SCORE).astype(_I64)


def _hint_dict(state: CycleState) -> dict[str, tuple[int, ...]]:
    h = state.get(model.DEVICE_HINT)
    if not isinstance(h, dict):
        h = dict(h) if h else {}
        state.write(model.DEVICE_HINT, h)
    return h


# DotProduct ------------------------------------------------------------------------------------
@dataclass
class DotProductScoreArgs(PolicyArgs):
    """``dimExtMethod`` / ``normMethod``: only the variant the paper runs, ``merge`` / ``max``
    (experiments/run_scripts/generate_run_scripts.py: ``-gpusel best -dimext merge -norm max``)."""

    dim_ext_method: Literal["merge"] = "merge"
    norm_method: Literal["max"] = "max"


class DotProductScore(_Policy):
    """``DotProductScore`` (pkg/simulator/plugin/dot_product_score.go, Tetris's alignment) with
    ``dimExtMethod: merge`` and ``normMethod: max`` (``GenerateSchedulingMatchGroups`` in
    pkg/utils/utils.go, ``ToVirtualNodeResourceList`` / ``ToVirtualPodResourceList`` in
    pkg/type/resource.go).

    A node whose ``cpu_left`` is below the pod's cpu has no match group: 0. Otherwise, in float64:
    ``node = (cpu_left / 128000, gpu_left_total / 8000)``, ``pod = (cpu / 128000, milli × count / 8000)``,
    ``s = 1 - (node · pod) / 2`` and the score is ``int64(100 × s)``: the smaller the alignment
    between what the node has left and what the pod asks, the higher. On nodes beyond the
    MaxSpec (128 cores, 8 GPUs) ``s`` can fall below 0, where the reference returns a negative
    score or none; here the score is clamped to 0..100 (identical within the MaxSpec). The
    devices are GpuShare's best fit (``-gpusel best``)."""

    Args = DotProductScoreArgs
    name = "DotProductScore"

    @staticmethod
    def formula(cpu_left: int, gpu_left: int, p: _Pod) -> int:
        if cpu_left < p.cpu:
            return MIN_NODE_SCORE
        n0 = float(cpu_left) / float(MAX_SPEC_CPU)
        n1 = float(gpu_left) / float(MAX_SPEC_GPU)
        p0 = float(p.cpu) / float(MAX_SPEC_CPU)
        p1 = float(p.total) / float(MAX_SPEC_GPU)
        cur = 1.0 - (n0 * p0 + n1 * p1) / 2.0
        if cur <= -1.0:  # never above the initial -1: no match group counted
            return MIN_NODE_SCORE
        return min(max(int(100.0 * cur), MIN_NODE_SCORE), MAX_NODE_SCORE)

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        cpu_left, left, _ = self._node(node_info)
        return self.formula(cpu_left, sum(left), _pod_of(state, pod))

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> NDArray[np.int64]:
        self._remember_rows(columns, rows)
        p = _pod_of(state, pod)
        cpu_left, left = self._cols(columns, rows)
        n0 = cpu_left.astype(_F64) / float(MAX_SPEC_CPU)
        n1 = left.sum(axis=1).astype(_F64) / float(MAX_SPEC_GPU)
        p0 = float(p.cpu) / float(MAX_SPEC_CPU)
        p1 = float(p.total) / float(MAX_SPEC_GPU)
        cur = 1.0 - (n0 * p0 + n1 * p1) / 2.0
        out = np.clip((100.0 * cur).astype(_I64), MIN_NODE_SCORE, MAX_NODE_SCORE)
        out[(cpu_left < p.cpu) | (cur <= -1.0)] = MIN_NODE_SCORE
        return out


# GpuClustering ---------------------------------------------------------------------------------
def _tdiv(a: int, b: int) -> int:
    """Go's integer division (truncated toward zero), ``b > 0``."""
    return a // b if a >= 0 else -((-a) // b)


def _tdiv_np(a: NDArray[np.int64], b: int) -> NDArray[np.int64]:
    return np.where(a >= 0, a // b, -((-a) // b))


class GpuClusteringScore(_Policy):
    """``GpuClusteringScore`` (pkg/simulator/plugin/gpu_clustering_score.go): pods of one kind
    together. The kind of a GPU pod is ``share-gpu`` or ``<n>-gpu`` (``GetGpuAffinityFromPodAnnotation``);
    a node's kinds are those of its pods. With ``g = 25 × (8000 - gpu_left_total) / 8000``
    (int64, truncated toward zero; higher on fuller nodes):

    * the node holds pods of the pod's kind only: ``g + 75``; of its kind and others: ``g + 50``;
    * no GPU pod at all: ``g + 25``; only pods of other kinds: ``g``;
    * a pod without a GPU: 0.
    """

    name = "GpuClusteringScore"

    def __init__(self, args: PolicyArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        # column form: the kinds of each row's pods, kept by NodeInfo generation
        self._cols_ref: NodeColumns | None = None
        self._gens = np.zeros(0, _I64)
        self._ntags = np.zeros(0, _I64)
        self._has: dict[str, NDArray[np.bool_]] = {}

    @staticmethod
    def _tags_of(ni: NodeInfo) -> set[str]:
        out = set()
        for pi in ni.pods:
            p = getattr(pi, "pod", pi)
            try:
                req = model.gpu_request(p)
            except model.GpuSpecError:
                continue
            if req is not None:
                t = _tag(req.count, req.milli)
                if t is not None:
                    out.add(t)
        return out

    @staticmethod
    def formula(gpu_left: int, tag: str | None, has_tag: bool, ntags: int) -> int:
        if tag is None:
            return MIN_NODE_SCORE
        g = _tdiv(MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - gpu_left), MAX_SPEC_GPU)
        if has_tag:
            return g + (MAX_NODE_SCORE * 3 // 4 if ntags == 1 else MAX_NODE_SCORE * 2 // 4)
        return g + (MAX_NODE_SCORE // 4 if ntags == 0 else 0)

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        p = _pod_of(state, pod)
        tag = p.tag()
        if tag is None:
            return MIN_NODE_SCORE
        _, left, node_model = self._node(node_info)
        if not _node_accessible(node_model, p):
            return MIN_NODE_SCORE
        tags = self._tags_of(node_info)
        return self.formula(sum(left), tag, tag in tags, len(tags))

    def _refresh(self, columns: NodeColumns, rows: NDArray[np.intp]) -> None:
        if self._cols_ref is not columns:
            self._cols_ref = columns
            self._gens = np.full(len(columns), -1, _I64)
            self._ntags = np.zeros(len(columns), _I64)
            self._has = {}
        stale = rows[self._gens[rows] != columns.generations[rows]]
        for i in stale.tolist():
            tags = self._tags_of(columns.infos[i])
            self._ntags[i] = len(tags)
            for t, arr in self._has.items():
                arr[i] = t in tags
            for t in tags - self._has.keys():
                arr = self._has[t] = np.zeros(len(columns), bool)
                arr[i] = True
            self._gens[i] = columns.generations[i]

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> NDArray[np.int64]:
        self._remember_rows(columns, rows)
        p = _pod_of(state, pod)
        tag = p.tag()
        if tag is None:
            return np.zeros(len(rows), _I64)
        _, left = self._cols(columns, rows)
        self._refresh(columns, rows)
        has_arr = self._has.get(tag)
        has = has_arr[rows] if has_arr is not None else np.zeros(len(rows), bool)
        ntags = self._ntags[rows]
        g = _tdiv_np(MAX_NODE_SCORE // 4 * (MAX_SPEC_GPU - left.sum(axis=1)), MAX_SPEC_GPU)
        bonus = np.where(has, np.where(ntags == 1, 75, 50), np.where(ntags == 0, 25, 0))
        out = (g + bonus).astype(_I64)
        out[~self._access(columns, rows, p)] = MIN_NODE_SCORE
        return out


# GpuPacking ------------------------------------------------------------------------------------
class GpuPackingScore(_Policy):
    """``GpuPackingScore`` (pkg/simulator/plugin/gpu_packing_score.go, ``getPackingScore``):
    prefer used GPUs, then used nodes, then free nodes (int64 arithmetic):

    * every GPU of the node is free (``ff`` = their number): ``max(33 - ff, ff)``;
    * else the devices the pod would take, smallest ``left`` first among those with
      ``left >= milli`` (a stable sort: lowest index on ties): if ``u > 0`` of them are fully
      free, ``max(50 - u, 33)``; otherwise (a share on a used GPU)
      ``max(100 - (Σ left × 100 / 1000) / 10, 50)``;
    * a pod without a GPU, or that does not fit: 0.
    """

    name = "GpuPackingScore"

    @staticmethod
    def formula(left: tuple[int, ...], p: _Pod) -> int:
        if p.milli <= 0:
            return MIN_NODE_SCORE
        ff = sum(1 for v in left if v == MILLI)
        if ff == len(left):
            return max(MAX_NODE_SCORE // 3 - ff, ff)
        need = p.count
        use: list[int] = []
        free_used = 0
        for i in sorted(range(len(left)), key=lambda j: left[j]):
            if need == 0:
                break
            if p.milli <= left[i]:
                need -= 1
                use.append(i)
                if left[i] == MILLI:
                    free_used += 1
        if need != 0:
            return MIN_NODE_SCORE
        if free_used > 0:
            return max(MAX_NODE_SCORE // 2 - free_used, MAX_NODE_SCORE // 3)
        ratio = sum(left[i] * 100 // MILLI for i in use)
        return max(MAX_NODE_SCORE - ratio // 10, MAX_NODE_SCORE // 2)

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        p = _pod_of(state, pod)
        if p.milli <= 0:
            return MIN_NODE_SCORE
        _, left, node_model = self._node(node_info)
        if not _node_accessible(node_model, p):
            return MIN_NODE_SCORE
        return self.formula(left, p)

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> NDArray[np.int64]:
        self._remember_rows(columns, rows)
        p = _pod_of(state, pod)
        if p.milli <= 0:
            return np.zeros(len(rows), _I64)
        gc = model.gpu_columns(columns, self.ledger, self.model_label)
        left = gc.left[rows]
        count = gc.count[rows]
        free = left == MILLI  # devices past a node's count hold 0: never free, never fit
        ff = np.count_nonzero(free, axis=1)
        all_free = np.maximum(MAX_NODE_SCORE // 3 - ff, ff)
        if p.share:
            fit = np.where(left >= p.milli, left, MILLI + 1).min(axis=1)  # the smallest that fits
            ok = fit <= MILLI
            used = np.maximum(MAX_NODE_SCORE - (fit * 100 // MILLI) // 10, MAX_NODE_SCORE // 2)
            other = np.where(ok, np.where(fit == MILLI, max(MAX_NODE_SCORE // 2 - 1, MAX_NODE_SCORE // 3), used), MIN_NODE_SCORE)
        else:  # whole GPUs: only free devices have left >= 1000
            ok = ff >= p.count
            other = np.where(ok, max(MAX_NODE_SCORE // 2 - p.count, MAX_NODE_SCORE // 3), MIN_NODE_SCORE)
        out = np.where(ff == count, all_free, other).astype(_I64)
        out[~self._access(columns, rows, p)] = MIN_NODE_SCORE
        return out


# BestFit ---------------------------------------------------------------------------------------
class BestFitScore(_Policy):
    """``BestFitScore`` (pkg/simulator/plugin/best_fit_score.go, ``getBestFitScore``): in float64,
    ``s = (cpu_left - cpu) / 128000 × 0.5 + (gpu_left_total - milli × count) / 8000 × 0.5`` (what
    would be left, lower is better) and the raw score ``int64((1 - s) × 100)``; 0 where the pod
    does not fit in those totals (the reference's Error). NormalizeScore is the reference's
    min-max ``NormalizeScore`` (plugin_utils.go): ``(s - lowest) × 100 / (highest - lowest)``
    (int64), all 0 when every score is equal."""

    name = "BestFitScore"

    @staticmethod
    def formula(cpu_left: int, gpu_left: int, p: _Pod) -> int:
        free = (float(cpu_left), float(gpu_left))
        req = (float(p.cpu), float(p.total))
        s = 0.0
        for f, r, m in zip(free, req, (float(MAX_SPEC_CPU), float(MAX_SPEC_GPU)), strict=True):
            if f < r:
                return MIN_NODE_SCORE
            s += (f - r) / m * 0.5
        return int((1.0 - s) * float(MAX_NODE_SCORE))

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        cpu_left, left, node_model = self._node(node_info)
        p = _pod_of(state, pod)
        if not _node_accessible(node_model, p):
            return MIN_NODE_SCORE
        return self.formula(cpu_left, sum(left), p)

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> NDArray[np.int64]:
        self._remember_rows(columns, rows)
        p = _pod_of(state, pod)
        cpu_left, left = self._cols(columns, rows)
        gpu_left = left.sum(axis=1)
        s = (cpu_left.astype(_F64) - float(p.cpu)) / float(MAX_SPEC_CPU) * 0.5
        s = s + (gpu_left.astype(_F64) - float(p.total)) / float(MAX_SPEC_GPU) * 0.5
        out = ((1.0 - s) * float(MAX_NODE_SCORE)).astype(_I64)
        out[(cpu_left < p.cpu) | (gpu_left < p.total) | ~self._access(columns, rows, p)] = MIN_NODE_SCORE
        return out

    @hookimpl
    def normalize_score(self, scores: list[NodeScore]) -> None:
        if not scores:
            return None
        hi = max(s.score for s in scores)
        lo = min(s.score for s in scores)
        rng = hi - lo
        for s in scores:
            s.score = MIN_NODE_SCORE if rng == 0 else (s.score - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // rng + MIN_NODE_SCORE
        self._break_ties(scores)
        return None

    @hookimpl
    def normalize_score_columns(self, scores: NDArray[np.int64]) -> NDArray[np.int64]:
        if not len(scores):
            return scores.copy()
        lo = int(scores.min())
        rng = int(scores.max()) - lo
        if rng == 0:
            return self._break_ties_columns(np.full(len(scores), MIN_NODE_SCORE, _I64))
        return self._break_ties_columns((scores - lo) * (MAX_NODE_SCORE - MIN_NODE_SCORE) // rng + MIN_NODE_SCORE)


# FGD -------------------------------------------------------------------------------------------
@dataclass
class FGDScoreArgs(PolicyArgs):
    """``typicalPods``: the workload's distribution (items ``cpuMilli``, ``gpuMilli``,
    ``gpuCount``, ``gpuModel``, ``percentage``), e.g. from :func:`~kubesched_gpushare.typical.typical_pods`
    over the trace. Absent: learned from the pods this scheduler has seen (PreFilter counts each
    pod uid once), with the ``typical_pods`` parameters below; recomputed at a cycle when the
    pods counted have doubled since the last computation or grown by ``relearnEvery``."""

    typical_pods: list[TypicalPod] | None = None
    popularity_threshold: int = 60
    increase_step: int = 10
    gpu_res_weight: float = 0.0
    include_cpu_pods: bool = False
    relearn_every: int = 100

    def validate(self) -> None:
        super().validate()  # each typicalPods item is validated as it is built
        if self.relearn_every < 1:
            raise ValueError("relearnEvery: must be >= 1")


def _sigmoid_scores(delta: Any) -> Any:
    """``int64(sigmoid(delta / 1000) × 100)`` with ``sigmoid(x) = 1 / (1 + exp(-x))``
    (fgd_score.go, plugin_utils.go), numpy's ``exp`` for one value and for many alike."""
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-(np.asarray(delta, _F64) / 1000.0))) * float(MAX_NODE_SCORE)).astype(_I64)


class DeviceHint(Mapping[str, tuple[int, ...]]):
    """``{node name: devices}`` read from FGD's arrays (built for every feasible node of a share
    pod, so it is not a dict of a thousand entries per cycle)."""

    __slots__ = ("_dev", "_index")

    def __init__(self, index: Mapping[str, int], dev: NDArray[np.int64]) -> None:
        self._index = index
        self._dev = dev

    def __getitem__(self, name: str) -> tuple[int, ...]:
        i = self._index.get(name)
        if i is None or self._dev[i] < 0:
            raise KeyError(name)
        return (int(self._dev[i]),)

    def __iter__(self) -> Iterator[str]:
        return (n for n, i in self._index.items() if self._dev[i] >= 0)

    def __len__(self) -> int:
        return int(np.count_nonzero(self._dev >= 0))

    def clone(self) -> DeviceHint:
        return self


class _Class:
    """FGD's cached scores for one pod resource class over every row, by row stamp."""

    __slots__ = ("dev", "scores", "stamps")

    def __init__(self, n: int) -> None:
        self.stamps = np.full(n, -1, _I64)
        self.scores = np.zeros(n, _I64)
        self.dev = np.full(n, -1, _I64)


class _RowStamps:
    """A stamp per row that changes exactly when what FGD reads of the row changes (cpu left,
    the devices' milli left, the GPU count, the model): GpuColumns' rows also change with the
    Ledger, not only with the NodeInfo generation. Checked in one comparison, and not at all
    while GpuColumns' arrays are the same objects (it replaces them when a row changes)."""

    __slots__ = ("_refs", "codes", "columns", "count", "cpu", "left", "next", "stamps")

    def __init__(self) -> None:
        self.columns: NodeColumns | None = None
        self._refs: tuple[Any, ...] = ()
        self.next = 0
        self.stamps: NDArray[np.int64] = np.zeros(0, _I64)
        self.cpu: NDArray[np.int64] = self.stamps
        self.left: NDArray[np.int64] = np.zeros((0, 1), _I64)
        self.count: NDArray[np.int64] = self.stamps
        self.codes: NDArray[Any] = self.stamps

    def sync(self, columns: NodeColumns, gc: Any) -> NDArray[np.int64]:
        refs = (gc.cpu_left, gc.left, gc.count, gc.codes)
        if self.columns is columns and all(a is b for a, b in zip(refs, self._refs, strict=True)):
            return self.stamps
        n = len(columns)
        if self.columns is not columns or len(self.stamps) != n:
            self.columns = columns
            self.stamps = np.arange(self.next, self.next + n, dtype=_I64)
            self.next += n
        else:
            left = gc.left
            old = self.left
            if old.shape[1] != left.shape[1]:
                w = max(old.shape[1], left.shape[1])
                old = np.pad(old, ((0, 0), (0, w - old.shape[1])))
                left = np.pad(left, ((0, 0), (0, w - left.shape[1])))
            diff = (self.cpu != gc.cpu_left) | (self.count != gc.count) | (self.codes != gc.codes) | (old != left).any(axis=1)
            changed = np.flatnonzero(diff)
            if len(changed):
                self.stamps[changed] = np.arange(self.next, self.next + len(changed), dtype=_I64)
                self.next += len(changed)
        self.cpu, self.left, self.count, self.codes = refs
        self._refs = refs
        return self.stamps


class FGDScore(_Policy):
    """``FGDScore`` (pkg/simulator/plugin/fgd_score.go, ``calculateGpuShareFragExtendScore``):
    fragmentation gradient descent. With ``F(node)`` the node's fragmentation against the
    typical pods (:func:`~kubesched_gpushare.frag.node_frag_score`):

    * a share (one GPU, milli < 1000): for each device ``i`` with ``left[i] >= milli``, the node
      after placing the pod there (``cpu_left - cpu``, ``left[i] - milli``); its score
      ``int64(sigmoid((F(node) - F(after)) / 1000) × 100)``; the node's score is the highest, and
      that device (the lowest index on ties) is the hint GpuShare's Reserve uses (``-gpusel
      FGDScore``). No device fits: 0.
    * whole GPUs or no GPU: the node after ``NodeResource.Sub`` (pkg/type/resource.go: cpu, then
      the devices with the least ``left >= milli`` first: for whole GPUs the lowest-index free
      ones; nothing subtracted when the cpu or the GPU count falls short), scored the same way.
    * a pod without any request: 100.
    * a node whose model the pod does not accept: 0 (the reference: an Error).

    The column form keeps each node's ``F`` and each pod class's scores and devices by NodeInfo
    generation and recomputes only the rows that changed, the candidate states of all of them in
    one numpy pass (:meth:`~kubesched_gpushare.frag.TypicalSet.frag_scores`).
    """

    Args = FGDScoreArgs
    name = "FGDScore"

    def __init__(self, args: FGDScoreArgs, handle: Handle) -> None:
        super().__init__(args, handle)
        self.args: FGDScoreArgs = args
        self._learned = args.typical_pods is None
        self._seen: set[str] = set()
        self._resources: list[PodResource] = []
        self._learned_at = 0
        self._set_typical(tuple(args.typical_pods or ()))

    # the typical pods ---------------------------------------------------------------------------
    def _set_typical(self, typical: tuple[TypicalPod, ...]) -> None:
        self.typical = typical
        self.tset = TypicalSet(typical)
        self._stamps = _RowStamps()
        self._frag_stamps = np.zeros(0, _I64)
        self._frag = np.zeros(0, _F64)
        self._classes: dict[Any, _Class] = {}

    def _relearn(self) -> None:
        n = len(self._resources)
        if n == self._learned_at:
            return
        if self._learned_at and n < 2 * self._learned_at and n - self._learned_at < self.args.relearn_every:
            return
        self._learned_at = n
        a = self.args
        self._set_typical(tuple(typical_pods(self._resources, a.popularity_threshold, a.increase_step, a.gpu_res_weight, a.include_cpu_pods)))

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod) -> None:
        if self._learned and pod.uid not in self._seen:
            self._seen.add(pod.uid)
            self._resources.append(_pod_of(state, pod).resource)
        return None

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod) -> None:
        if self._learned:
            self._relearn()
        return None

    # per node (the reference) -------------------------------------------------------------------
    def _after_sub(self, cpu_left: int, left: tuple[int, ...], p: _Pod) -> tuple[int, list[int]]:
        """``NodeResource.Sub``: the state after the pod (unchanged where it falls short)."""
        out = list(left)
        if cpu_left < p.cpu or len(left) < p.count:
            return cpu_left, out
        cpu_left -= p.cpu
        need = p.count
        if need == 0:
            return cpu_left, out
        for i in sorted(range(len(out)), key=lambda j: out[j]):
            if p.milli <= out[i]:
                need -= 1
                out[i] -= p.milli
                if need <= 0:
                    break
        return cpu_left, out

    def score_node(self, cpu_left: int, left: tuple[int, ...], node_model: str, p: _Pod) -> tuple[int, int]:
        """(score, device: -1 unless a share) on one node: the reference's arithmetic."""
        typical = self.tset.pods
        before = node_frag_score(cpu_left, left, node_model, typical)
        if p.share:
            best, dev = 0, -1
            for i, v in enumerate(left):
                if v >= p.milli:
                    after = list(left)
                    after[i] -= p.milli
                    s = int(_sigmoid_scores(before - node_frag_score(cpu_left - p.cpu, after, node_model, typical)))
                    if dev < 0 or s > best:
                        best, dev = s, i
            return best, dev
        c, after = self._after_sub(cpu_left, left, p)
        return int(_sigmoid_scores(before - node_frag_score(c, after, node_model, typical))), -1

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        p = _pod_of(state, pod)
        if not p.requests_any:
            return MAX_NODE_SCORE
        cpu_left, left, node_model = self._node(node_info)
        if not _node_accessible(node_model, p):
            return MIN_NODE_SCORE
        s, dev = self.score_node(cpu_left, left, node_model, p)
        if dev >= 0:
            _hint_dict(state)[node_info.name] = (dev,)
        return s

    # every node (the column form) ---------------------------------------------------------------
    def _frags(self, gc: Any, rows: NDArray[np.intp], stamps: NDArray[np.int64]) -> NDArray[np.float64]:
        """F of ``rows`` now, recomputed for the rows that changed since."""
        stale = rows[self._frag_stamps[rows] != stamps[rows]]
        if len(stale):
            acc = self.tset.access(gc.models)[gc.codes[stale]]
            self._frag[stale] = self.tset.frag_scores(gc.cpu_left[stale], gc.left[stale], acc)
            self._frag_stamps[stale] = stamps[stale]
        return self._frag[rows]

    def _compute(self, gc: Any, rows: NDArray[np.intp], stamps: NDArray[np.int64], p: _Pod, ent: _Class) -> None:
        before = self._frags(gc, rows, stamps)
        cpu_left = gc.cpu_left[rows]
        left = gc.left[rows]
        codes = gc.codes[rows]
        amatrix = self.tset.access(gc.models)
        if p.share:
            fits = left >= p.milli  # devices past a node's count hold 0 < milli: never fit
            ri, di = np.nonzero(fits)
            after = left[ri]
            after[np.arange(len(ri)), di] -= p.milli
            frag = self.tset.frag_scores(cpu_left[ri] - p.cpu, after, amatrix[codes[ri]])
            cand = np.full(left.shape, -1, _I64)
            cand[ri, di] = _sigmoid_scores(before[ri] - frag)
            dev = np.argmax(cand, axis=1)  # the first of the highest
            score = cand[np.arange(len(rows)), dev]
            none = score < 0
            score[none] = MIN_NODE_SCORE
            dev[none] = -1
            ent.scores[rows] = score
            ent.dev[rows] = dev
        else:
            count = gc.count[rows]
            ok = (cpu_left >= p.cpu) & (count >= p.count)
            after_cpu = np.where(ok, cpu_left - p.cpu, cpu_left)
            after = left
            if p.count:
                # whole GPUs (milli 1000): Sub's ascending stable order takes the free devices by index
                fit = left >= p.milli
                take = fit & (np.cumsum(fit, axis=1) <= p.count) & ok[:, None]
                after = left - p.milli * take
            frag = self.tset.frag_scores(after_cpu, after, amatrix[codes])
            ent.scores[rows] = _sigmoid_scores(before - frag)
            ent.dev[rows] = -1
        ent.stamps[rows] = stamps[rows]

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> NDArray[np.int64] | None:
        self._remember_rows(columns, rows)
        p = _pod_of(state, pod)
        if not p.requests_any:
            return np.full(len(rows), MAX_NODE_SCORE, _I64)
        if p.count > 1 and p.milli < MILLI:
            return None  # not a valid request (GpuShare rejects it): the per-node form decides
        gc = model.gpu_columns(columns, self.ledger, self.model_label)
        if self._stamps.columns is not columns or len(self._frag) != len(columns):
            self._frag_stamps = np.full(len(columns), -1, _I64)
            self._frag = np.zeros(len(columns), _F64)
            self._classes = {}
        stamps = self._stamps.sync(columns, gc)
        key = (p.cpu, p.milli, p.count)  # the pod's models only decide access, applied below
        ent = self._classes.get(key)
        if ent is None:
            ent = self._classes[key] = _Class(len(columns))
        rows = np.asarray(rows, np.intp)
        stale = rows[ent.stamps[rows] != stamps[rows]]
        if len(stale):
            self._compute(gc, stale, stamps, p, ent)
        out = ent.scores[rows]
        acc = self._access(columns, rows, p)
        if not acc.all():
            out = np.where(acc, out, MIN_NODE_SCORE)
        if p.share:
            dev = np.full(len(columns), -1, _I64)
            dev[rows] = np.where(acc, ent.dev[rows], -1)
            state.write(model.DEVICE_HINT, DeviceHint(columns.index, dev))
        return out.astype(_I64, copy=True)
