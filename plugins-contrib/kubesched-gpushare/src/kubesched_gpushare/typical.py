"""The workload's typical pods: the distribution of (CPU, GPU) requests FGD measures fragmentation
against.

Transcribes ``GetTypicalPods`` and ``SortTargetPodInDecreasingCount`` of the paper's simulator
(``hkust-adsl/kubernetes-scheduler-simulator``, ``pkg/utils/frag.go``; ``PodResource`` and
``TargetPodList.Less`` in ``pkg/type/resource.go``; ``GetPodResource`` in ``pkg/utils/utils.go``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kubesched.sdk.quantity import QuantityError, milli_value

__all__ = [
    "DEFAULT_INCREASE_STEP",
    "DEFAULT_POPULARITY_THRESHOLD",
    "PodResource",
    "TypicalPod",
    "pod_resource",
    "typical_pods",
]

MILLI = 1000
#: ``DefaultTypicalPodPopularityThreshold`` / ``DefaultTypicalPodIncreaseStep`` (pkg/type/resource.go)
DEFAULT_POPULARITY_THRESHOLD = 60
DEFAULT_INCREASE_STEP = 10
#: ``schedulerutil.DefaultMilliCPURequest``: a container without a cpu request counts 100m
DEFAULT_MILLI_CPU_REQUEST = 100


class PodResource(NamedTuple):
    """A pod's resources as the reference sees them (``simontype.PodResource``): CPU in
    millicores (non-zero: 100m for a container without a cpu request), GPU milli per GPU
    (0 for a CPU pod, 1..999 a share of one GPU, 1000 whole GPUs), the GPU count, and the
    allowed GPU models as the pod's ``A|B`` string ('' = any)."""

    cpu_milli: int
    gpu_milli: int
    gpu_count: int
    gpu_model: str

    def less(self, other: PodResource) -> bool:
        """``PodResource.Less``: by cpu, then gpu milli, then count, then model."""
        return tuple(self) < tuple(other)


@dataclass(frozen=True, slots=True)
class TypicalPod:
    """One entry of the typical pods (``simontype.TargetPod``): a resource class and its share
    of the workload, ``percentage`` in 0..1.

    As FGD's args (``typicalPods`` list items): ``cpuMilli``, ``gpuMilli`` (per GPU),
    ``gpuCount``, ``gpuModel`` (``A|B``, '' = any), ``percentage``."""

    cpu_milli: int = 0
    gpu_milli: int = 0
    gpu_count: int = 0
    gpu_model: str = ""
    percentage: float = 0.0

    def validate(self) -> None:
        if self.cpu_milli < 0:
            raise ValueError("cpuMilli: must be >= 0")
        if not 0 <= self.gpu_milli <= MILLI:
            raise ValueError("gpuMilli: must be in 0..1000")
        if self.gpu_count < 0:
            raise ValueError("gpuCount: must be >= 0")
        if 0 < self.gpu_milli < MILLI and self.gpu_count != 1:
            raise ValueError("gpuCount: a share of a GPU (gpuMilli < 1000) is on one GPU: must be 1")
        if not 0.0 <= self.percentage <= 1.0:
            raise ValueError("percentage: must be in 0..1")

    @property
    def resource(self) -> PodResource:
        return PodResource(self.cpu_milli, self.gpu_milli, self.gpu_count, self.gpu_model)


def _non_zero_cpu(pod: Any) -> int:
    """``GetNonzeroRequests`` summed over the pod's containers (init containers and overhead are
    not counted, as in the reference's ``GetPodResource``)."""
    total = 0
    for c in pod.containers:
        res = c.get("resources") or {}
        req = res.get("requests") or {}
        if "cpu" in req:
            try:
                total += milli_value(req["cpu"])
            except QuantityError:
                pass
        else:
            total += DEFAULT_MILLI_CPU_REQUEST
    return total


def pod_resource(pod: Any) -> PodResource:
    """The reference's ``GetPodResource`` for a Pod view, from the GPU model's
    :func:`~kubesched_gpushare.model.gpu_request` (an invalid GPU spec counts as a CPU pod)."""
    from .model import GpuSpecError, gpu_request

    try:
        req = gpu_request(pod)
    except GpuSpecError:
        req = None
    cpu = _non_zero_cpu(pod)
    if req is None:
        return PodResource(cpu, 0, 0, "")
    return PodResource(cpu, req.milli, req.count, "|".join(sorted(req.models)))


def _as_resource(item: Any) -> PodResource:
    if isinstance(item, PodResource):
        return item
    if isinstance(item, TypicalPod):
        return item.resource
    if isinstance(item, tuple):
        return PodResource(*item)
    return pod_resource(item)


def typical_pods(
    pods_or_requests: Iterable[Any],
    popularity_threshold: int = DEFAULT_POPULARITY_THRESHOLD,
    increase_step: int = DEFAULT_INCREASE_STEP,
    gpu_res_weight: float = 0.0,
    include_cpu_pods: bool = False,
) -> list[TypicalPod]:
    """``GetTypicalPods``: the most frequent resource classes of ``pods_or_requests`` (Pod views,
    :class:`PodResource` tuples ``(cpu_milli, gpu_milli, gpu_count, gpu_model)`` or
    :class:`TypicalPod`), most frequent first, that together make at least
    ``popularity_threshold`` % of the pods, with their shares renormalised to sum to 1.

    * CPU pods (gpu count 0) are left out unless ``include_cpu_pods`` (``IsInvolvedCpuPods``).
    * Each pod counts 1, or ``1 + gpu_count * gpu_res_weight`` for a whole-GPU pod when
      ``gpu_res_weight > 0`` (``GpuResWeight``).
    * Classes are sorted by count, descending; equal counts by (cpu, gpu milli, gpu count,
      model), descending (``sort.Reverse`` of ``TargetPodList.Less``).
    * Classes are taken ``increase_step`` at a time until their cumulative count reaches
      ``popularity_threshold`` % of the total (``PodPopularityThreshold``; 0 or less means the
      defaults 60 and 10, as in the reference). Where the reference would loop forever (the
      classes run out before the threshold through float rounding) this stops at the last class.
    * Each taken class's share is ``count / total``; when classes were left out it is then
      divided by ``cumulative / total`` (in that order: the reference's float arithmetic).
    """
    counts: dict[PodResource, float] = {}
    total = 0.0
    for item in pods_or_requests:
        res = _as_resource(item)
        if not include_cpu_pods and res.gpu_count == 0:
            continue
        weighted = 1.0
        if gpu_res_weight > 0 and res.gpu_milli == MILLI:
            weighted = 1.0 + float(res.gpu_count) * gpu_res_weight
        counts[res] = counts.get(res, 0.0) + weighted
        total += weighted
    # sort.Reverse(TargetPodList): descending by count, then descending by PodResource.Less
    order: list[list[Any]] = [[res, cnt] for res, cnt in sorted(counts.items(), key=lambda kv: (kv[1], tuple(kv[0])), reverse=True)]
    threshold = popularity_threshold if popularity_threshold > 0 else DEFAULT_POPULARITY_THRESHOLD
    step = increase_step if increase_step > 0 else DEFAULT_INCREASE_STEP
    expected = float(threshold) * total / 100.0
    i = 0
    taken_to = 0
    cum = 0.0
    while cum < expected and i < len(order):
        taken_to += step
        while i < taken_to and i < len(order):
            cum += order[i][1]
            order[i][1] = order[i][1] / total
            i += 1
    if i >= len(order):
        chosen = order
    else:
        chosen = order[:i]
        for entry in chosen:
            entry[1] /= cum / total
    return [TypicalPod(r.cpu_milli, r.gpu_milli, r.gpu_count, r.gpu_model, p) for r, p in chosen]

