"""NodeResourcesFitArgs and NodeResourcesBalancedAllocationArgs.

Defaults are kube-scheduler's ``pkg/scheduler/apis/config/v1/defaults.go``
(``SetDefaults_NodeResourcesFitArgs``, ``SetDefaults_NodeResourcesBalancedAllocationArgs``), applied
when the dataclass is built (``__post_init__``), as the v1 scheme defaults a decoded config:

* Fit: no ``scoringStrategy`` -> ``{type: LeastAllocated, resources: [cpu 1, memory 1]}``; an empty
  ``resources`` list -> the same two resources; a weight of 0 (or unset) -> 1. A
  ``scoringStrategy`` given without ``type`` is *not* defaulted (validation rejects ``""``).
* BalancedAllocation: empty ``resources`` -> ``[cpu 1, memory 1]``; a weight of 0 -> 1.

``validate()`` is ``validation_pluginargs.go``'s (v1.36) ``ValidateNodeResourcesFitArgs`` /
``ValidateNodeResourcesBalancedAllocationArgs`` with their messages. Go collects every error into
an aggregate; ``validate()`` raises the first one, in Go's order, as ``ValueError("<path>: <msg>")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .validation import (
    duplicate_error,
    forbidden_error,
    invalid_error,
    not_supported_error,
    qualified_name_errors,
    required_error,
)

__all__ = [
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatioParam",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "default_resources",
]

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
#: sets.List(supportedScoringStrategyTypes): sorted.
SUPPORTED_SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)
#: config.MaxCustomPriorityScore: the top of the shape's score scale.
MAX_CUSTOM_PRIORITY_SCORE = 10
_MAX_WEIGHT = 100
_MIN_UTILIZATION, _MAX_UTILIZATION = 0, 100
_MIN_SCORE, _MAX_SCORE = 0, MAX_CUSTOM_PRIORITY_SCORE


@dataclass
class ResourceSpec:
    """A resource and its weight in scoring."""

    name: str = ""
    weight: int = 0


@dataclass
class UtilizationShapePoint:
    """A point of RequestedToCapacityRatio's function: utilization 0..100 -> score 0..10."""

    utilization: int = 0
    score: int = 0


@dataclass
class RequestedToCapacityRatioParam:
    shape: list[UtilizationShapePoint] = field(default_factory=list)


def default_resources() -> list[ResourceSpec]:
    """defaults.go's defaultResourceSpec: cpu and memory, weight 1 each."""
    return [ResourceSpec("cpu", 1), ResourceSpec("memory", 1)]


@dataclass
class ScoringStrategy:
    """How NodeResourcesFit scores: ``type`` LeastAllocated | MostAllocated |
    RequestedToCapacityRatio over ``resources`` (with weights)."""

    type: str = ""
    resources: list[ResourceSpec] = field(default_factory=list)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


def _default_scoring_strategy() -> ScoringStrategy:
    return ScoringStrategy(type=LEAST_ALLOCATED, resources=default_resources())


def _default_weights(resources: list[ResourceSpec]) -> None:
    for r in resources:
        if r.weight == 0:
            r.weight = 1


def _validate_resources(resources: list[ResourceSpec], path: str) -> list[str]:
    errs = []
    for i, r in enumerate(resources):
        if r.weight <= 0 or r.weight > _MAX_WEIGHT:
            errs.append(
                invalid_error(
                    f"{path}[{i}].weight",
                    r.weight,
                    f"resource weight of {r.name} not in valid range (0, 100]",
                )
            )
    return errs


def _validate_function_shape(shape: list[UtilizationShapePoint], path: str) -> list[str]:
    if not shape:
        return [required_error(path, "at least one point must be specified")]
    errs = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                invalid_error(
                    f"{path}[{i}].utilization",
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, p in enumerate(shape):
        if p.utilization < _MIN_UTILIZATION or p.utilization > _MAX_UTILIZATION:
            errs.append(
                invalid_error(
                    f"{path}[{i}].utilization",
                    p.utilization,
                    f"not in valid range [{_MIN_UTILIZATION}, {_MAX_UTILIZATION}]",
                )
            )
        if p.score < _MIN_SCORE or p.score > _MAX_SCORE:
            errs.append(
                invalid_error(
                    f"{path}[{i}].score",
                    p.score,
                    f"not in valid range [{_MIN_SCORE}, {_MAX_SCORE}]",
                )
            )
    return errs


def _raise_first(errs: list[str]) -> None:
    if errs:
        raise ValueError(errs[0])


@dataclass
class NodeResourcesFitArgs:
    """Args of NodeResourcesFit (``kind: NodeResourcesFitArgs``).

    ``ignoredResources``: extended resources Filter does not check. ``ignoredResourceGroups``:
    extended resource groups (the part before ``/``) Filter does not check.
    """

    ignored_resources: list[str] = field(default_factory=list)
    ignored_resource_groups: list[str] = field(default_factory=list)
    scoring_strategy: ScoringStrategy | None = field(default_factory=_default_scoring_strategy)

    def __post_init__(self) -> None:
        if self.scoring_strategy is None:
            self.scoring_strategy = _default_scoring_strategy()
        if not self.scoring_strategy.resources:
            self.scoring_strategy.resources = default_resources()
        _default_weights(self.scoring_strategy.resources)

    def errors(self) -> list[str]:
        """Every validation error, in ValidateNodeResourcesFitArgs' order."""
        errs: list[str] = []
        for i, res in enumerate(self.ignored_resources):
            errs.extend(
                invalid_error(f"ignoredResources[{i}]", res, m) for m in qualified_name_errors(res)
            )
        for i, group in enumerate(self.ignored_resource_groups):
            path = f"ignoredResourceGroups[{i}]"
            if "/" in group:
                errs.append(invalid_error(path, group, "resource group name can't contain '/'"))
            errs.extend(invalid_error(path, group, m) for m in qualified_name_errors(group))
        s = self.scoring_strategy
        if s is not None:
            if s.type not in SUPPORTED_SCORING_STRATEGY_TYPES:
                errs.append(
                    not_supported_error(
                        "scoringStrategy.type", s.type, SUPPORTED_SCORING_STRATEGY_TYPES
                    )
                )
            errs.extend(_validate_resources(s.resources, "scoringStrategy.resources"))
            rtcr_path = "scoringStrategy.requestedToCapacityRatio"
            if s.type == REQUESTED_TO_CAPACITY_RATIO:
                if s.requested_to_capacity_ratio is None:
                    errs.append(
                        required_error(rtcr_path, "must be specified when type is RequestedToCapacityRatio")
                    )
                else:
                    errs.extend(
                        _validate_function_shape(s.requested_to_capacity_ratio.shape, rtcr_path + ".shape")
                    )
            elif s.requested_to_capacity_ratio is not None:
                errs.append(
                    forbidden_error(rtcr_path, "must be nil when type is not RequestedToCapacityRatio")
                )
        else:
            errs.append(required_error("scoringStrategy", "ScoringStrategy field is required"))
        return errs

    def validate(self) -> None:
        _raise_first(self.errors())


@dataclass
class NodeResourcesBalancedAllocationArgs:
    """Args of NodeResourcesBalancedAllocation (``kind: NodeResourcesBalancedAllocationArgs``):
    the resources whose allocation is balanced (every weight must be 1)."""

    resources: list[ResourceSpec] = field(default_factory=default_resources)

    def __post_init__(self) -> None:
        if not self.resources:
            self.resources = default_resources()
            return
        _default_weights(self.resources)

    def errors(self) -> list[str]:
        errs = []
        seen: set[str] = set()
        for i, r in enumerate(self.resources):
            if r.name in seen:
                errs.append(duplicate_error(f"resources[{i}].name", r.name))
            else:
                seen.add(r.name)
            if r.weight != 1:
                errs.append(invalid_error(f"resources[{i}].weight", r.weight, "must be 1"))
        return errs

    def validate(self) -> None:
        _raise_first(self.errors())
