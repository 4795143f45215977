"""GPU fragmentation of a node, measured against the typical pods (the paper's Section 4).

A port of the paper's simulator (``hkust-adsl/kubernetes-scheduler-simulator``,
``pkg/utils/frag.go``: ``GetNodePodFrag``, ``CanNodeHostPodOnGpuMemory``,
``NodeGpuShareFragAmount``, ``NodeGpuShareFragAmountScore``, ``GetGpuFragMilliByNodeResAndPodRes``;
``pkg/utils/utils.go``: ``IsNodeAccessibleToPodByType``), in two forms that give the same floats:

* per node, in plain Python (:func:`node_pod_frag`, :func:`node_frag_amount`,
  :func:`node_frag_score`), the reference;
* over many node states at once, in numpy (:class:`TypicalSet` and :meth:`TypicalSet.frag_scores`),
  which FGD's column form uses.

A node state is ``(cpu_left, left, model)``: the millicores left (allocatable minus the
requests of its pods), the GPU milli left per device (``MilliGpuLeftList``; its length is the
node's GPU count) and the node's GPU model ('' for a node without one).

For each typical pod ``p`` with share ``f`` (ignored unless ``0 <= f <= 1``), the node is in one
quadrant (``GetNodePodFrag``):

=============  =====================================================================
``xl`` / ``xr``  ``p`` asks no GPU: its CPU fits (``xl_satisfied``) or not (``xr_lack_cpu``)
``no_access``  ``p``'s models (``A|B``) do not include the node's (a node without a model never
               matches a pod that names models)
``q3`` / ``q4``  the GPUs can host ``p`` (at least ``max(count, 1)`` devices with ``left >= milli``):
               its CPU fits (``q3_satisfied``) or not (``q4_lack_cpu``)
``q2`` / ``q1``  the GPUs cannot: its CPU fits (``q2_lack_gpu``) or not (``q1_lack_both``)
=============  =====================================================================

and adds to the node's fragment amount: in ``q3``, ``f ×`` the milli left on devices with less
than ``p``'s milli (they can not serve ``p``) to ``q2``, and ``f × (rest)`` to ``q3``; in every other
quadrant ``f ×`` all the node's GPU milli left to that quadrant. The node's fragmentation score
(``NodeGpuShareFragAmountScore``) is the sum of every quadrant but ``q3``: the expected GPU milli
that the next (typical) pod can not use. Sums are float64, accumulated per quadrant in the typical
pods' order and then over the quadrants in the reference's order (Q1, Q2, Q4, XL, XR, NA), so the
result is the reference's bit for bit. GPU memory is not modelled (the reference's
``MilliGpuLeftList`` is the only GPU dimension in these formulas, as here).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .typical import PodResource, TypicalPod

__all__ = [
    "FRAG_TYPES",
    "NO_ACCESS",
    "Q1_LACK_BOTH",
    "Q2_LACK_GPU",
    "Q3_SATISFIED",
    "Q4_LACK_CPU",
    "XL_SATISFIED",
    "XR_LACK_CPU",
    "TypicalSet",
    "accessible",
    "can_host_on_gpus",
    "node_frag_amount",
    "node_frag_score",
    "node_pod_frag",
]

Q1_LACK_BOTH = "q1_lack_both"
Q2_LACK_GPU = "q2_lack_gpu"
Q3_SATISFIED = "q3_satisfied"
Q4_LACK_CPU = "q4_lack_cpu"
XL_SATISFIED = "xl_satisfied"
XR_LACK_CPU = "xr_lack_cpu"
NO_ACCESS = "no_access"
#: ``FragRatioDataMap``'s order: the index of each quadrant in a fragment amount
FRAG_TYPES = (Q1_LACK_BOTH, Q2_LACK_GPU, Q3_SATISFIED, Q4_LACK_CPU, XL_SATISFIED, XR_LACK_CPU, NO_ACCESS)
_INDEX = {t: i for i, t in enumerate(FRAG_TYPES)}
_Q1, _Q2, _Q3, _Q4, _XL, _XR, _NA = range(7)
#: the quadrants summed by ``FragAmountSumExceptQ3``, in its order
_SUMMED = (_Q1, _Q2, _Q4, _XL, _XR, _NA)

_F64 = np.float64
_I64 = np.int64


def accessible(node_model: str, pod_models: str) -> bool:
    """``IsNodeAccessibleToPodByType``: ``pod_models`` is the pod's ``A|B`` ('' or only empty
    entries: any model); a node without a model only takes pods that name none."""
    if not pod_models:
        return True
    if not node_model:
        return False
    named = [m for m in pod_models.split("|") if m]
    return not named or node_model in named


def can_host_on_gpus(left: Sequence[int], pod: PodResource | TypicalPod) -> bool:
    """``CanNodeHostPodOnGpuMemory``: at least ``max(gpu_count, 1)`` devices with
    ``left >= gpu_milli``."""
    need = pod.gpu_count
    for v in left:
        if v >= pod.gpu_milli:
            need -= 1
            if need <= 0:
                return True
    return False


def node_pod_frag(cpu_left: int, left: Sequence[int], model: str, pod: PodResource | TypicalPod) -> str:
    """``GetNodePodFrag``: the quadrant of the node for ``pod`` (one of :data:`FRAG_TYPES`)."""
    if pod.gpu_milli == 0:
        return XL_SATISFIED if cpu_left >= pod.cpu_milli else XR_LACK_CPU
    if not accessible(model, pod.gpu_model):
        return NO_ACCESS
    if can_host_on_gpus(left, pod):
        return Q3_SATISFIED if cpu_left >= pod.cpu_milli else Q4_LACK_CPU
    return Q2_LACK_GPU if cpu_left >= pod.cpu_milli else Q1_LACK_BOTH


def node_frag_amount(cpu_left: int, left: Sequence[int], model: str, typical: Sequence[TypicalPod]) -> list[float]:
    """``NodeGpuShareFragAmount``: the node's fragment amount per quadrant (indexed as
    :data:`FRAG_TYPES`)."""
    data = [0.0] * len(FRAG_TYPES)
    total = sum(left)
    for p in typical:
        f = p.percentage
        if f < 0 or f > 1:
            continue
        kind = node_pod_frag(cpu_left, left, model, p)
        if kind == Q3_SATISFIED:
            frag = sum(v for v in left if v < p.gpu_milli)
            data[_Q2] += f * float(frag)
            data[_Q3] += f * float(total - frag)
        else:
            data[_INDEX[kind]] += f * float(total)
    return data


def node_frag_score(cpu_left: int, left: Sequence[int], model: str, typical: Sequence[TypicalPod]) -> float:
    """``NodeGpuShareFragAmountScore``: the fragment amount summed over every quadrant but Q3."""
    data = node_frag_amount(cpu_left, left, model, typical)
    out = 0.0
    for i in _SUMMED:
        out += data[i]
    return out


class TypicalSet:
    """The typical pods compiled to arrays, to measure many node states in one numpy pass."""

    __slots__ = ("_access", "cpu", "freq", "gpu", "milli", "models", "need", "pods")

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        #: the pods counted (share in 0..1), in order
        self.pods = tuple(p for p in typical if 0 <= p.percentage <= 1)
        self.cpu = np.array([p.cpu_milli for p in self.pods], _I64)
        self.milli = np.array([p.gpu_milli for p in self.pods], _I64)
        self.need = np.array([max(p.gpu_count, 1) for p in self.pods], _I64)
        self.freq = np.array([p.percentage for p in self.pods], _F64)
        self.gpu = self.milli > 0
        self.models = [p.gpu_model for p in self.pods]
        self._access: dict[tuple[str, ...], NDArray[np.bool_]] = {}

    def __len__(self) -> int:
        return len(self.pods)

    def access(self, models: Sequence[str]) -> NDArray[np.bool_]:
        """``(len(models) + 1, K)``: row ``c`` says which typical pods a node of model
        ``models[c]`` is accessible to; the last row is a node without a model (code -1)."""
        key = tuple(models)
        got = self._access.get(key)
        if got is None:
            names = [*key, ""]
            got = np.array([[accessible(m, pm) for pm in self.models] for m in names], bool).reshape(len(names), len(self.pods))
            self._access[key] = got
        return got

    def frag_scores(self, cpu_left: NDArray[np.int64], left: NDArray[np.int64], acc: NDArray[np.bool_], chunk: int = 4096) -> NDArray[np.float64]:
        """:func:`node_frag_score` of ``S`` node states at once: ``cpu_left`` ``(S,)``, ``left``
        ``(S, W)`` (devices past a node's count hold 0: they change no sum and host nothing),
        ``acc`` ``(S, K)``: whether each state's node is accessible to each typical pod."""
        n = len(cpu_left)
        if n > chunk:
            return np.concatenate([self.frag_scores(cpu_left[i : i + chunk], left[i : i + chunk], acc[i : i + chunk], chunk) for i in range(0, n, chunk)])
        k = len(self.pods)
        if k == 0 or n == 0:
            return np.zeros(n, _F64)
        total = left.sum(axis=1)
        cpu_ok = cpu_left[:, None] >= self.cpu[None, :]
        ge = left[:, :, None] >= self.milli[None, None, :]
        can = np.count_nonzero(ge, axis=1) >= self.need[None, :]
        # the milli left on the devices that can not serve the pod (GetGpuFragMilliByNodeResAndPodRes)
        frag = np.einsum("sw,swk->sk", left, ~ge)
        cat = np.where(can, np.where(cpu_ok, _Q3, _Q4), np.where(cpu_ok, _Q2, _Q1))
        cat = np.where(acc, cat, _NA)
        cat = np.where(self.gpu[None, :], cat, np.where(cpu_ok, _XL, _XR))
        q3 = cat == _Q3
        amount = np.where(q3, frag, total[:, None]).astype(_F64)
        contrib = self.freq[None, :] * amount
        cat[q3] = _Q2  # Q3's fragment goes to Q2
        out = np.zeros(n, _F64)
        for c in _SUMMED:
            m = cat == c
            if m.any():
                # a running sum in the typical pods' order: Go's float accumulation, bit for bit
                out = out + np.cumsum(np.where(m, contrib, 0.0), axis=1)[:, -1]
        return out
