"""Resource pools as Go's ``pools_incubating.go`` (v0.36.3) gathers them for one node.

Slices and devices are read once per allocator into :class:`Slice` / :class:`Device` (quantities
parsed once); ``GatherPools`` keeps the newest generation of each pool, marks pools incomplete
(not all ``resourceSliceCount`` slices seen) or invalid (duplicate device names, a counter set
that does not exist, ...), sorts pools by (driver, pool) and slices by name, and puts pools with
binding conditions last.

Node selectors (a slice's ``nodeSelector``, a device's with ``perDeviceNodeSelection``) are parsed
once per object by the NodeAffinity plugin's port of component-helpers' ``nodeaffinity``, so they
match and fail as Go's ``NewNodeSelector`` does (an invalid label key is an error, a field other
than ``metadata.name`` matches nothing); the error names the selector as ``NodeSelector.String()``
prints it. One text differs from Go: for a device's selector Go's error prints the whole device
(``Device.String()``, every field) where kubesched names it (``device gpu-0 in slice s``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kubesched.runtime.plugins.nodeaffinity import _aggregate, _NodeSelector

from .types import AllocatorError, Features, Quantity

__all__ = ["Device", "Pool", "Slice", "gather_pools", "node_matches"]


class CapacityPolicy:
    """A device capacity's requestPolicy (default, validValues, validRange), parsed once."""

    __slots__ = ("default", "has_range", "max", "min", "step", "valid_values")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        d = raw.get("default")
        self.default = Quantity.parse(d) if d is not None else None
        vv = raw.get("validValues")
        self.valid_values = [Quantity.parse(v) for v in vv] if vv else None
        vr = raw.get("validRange")
        self.min = self.max = self.step = None
        self.has_range = vr is not None
        if vr is not None:
            self.min = Quantity.parse(vr["min"]) if vr.get("min") is not None else None
            self.max = Quantity.parse(vr["max"]) if vr.get("max") is not None else None
            self.step = Quantity.parse(vr["step"]) if vr.get("step") is not None else None



class Capacity:
    __slots__ = ("policy", "value")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.value = Quantity.parse(raw.get("value", 0))
        p = raw.get("requestPolicy")
        self.policy = CapacityPolicy(p) if p is not None else None


class Device:
    """One device of a slice (v1 ``spec.devices[i]``), read once."""

    __slots__ = (
        "all_nodes",
        "allow_multi",
        "attributes",
        "binding_conditions",
        "binding_failure_conditions",
        "binds_to_node",
        "capacity",
        "consumes_counters",
        "name",
        "node_name",
        "node_selector",
        "parsed_selector",
        "raw",
        "taints",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.name: str = raw.get("name", "")
        self.attributes: Mapping[str, Any] = raw.get("attributes") or {}
        self.capacity = {k: Capacity(v) for k, v in (raw.get("capacity") or {}).items()}
        self.consumes_counters: list[tuple[str, dict[str, Fraction]]] = [
            (c.get("counterSet", ""), {n: Quantity.parse((v or {}).get("value", 0)).value for n, v in (c.get("counters") or {}).items()})
            for c in raw.get("consumesCounters") or ()
        ]
        self.allow_multi: bool | None = raw.get("allowMultipleAllocations")
        self.taints: list[Mapping[str, Any]] = raw.get("taints") or []
        self.binding_conditions: list[str] | None = raw.get("bindingConditions")
        self.binding_failure_conditions: list[str] | None = raw.get("bindingFailureConditions")
        self.binds_to_node = bool(raw.get("bindsToNode"))
        self.node_name: str | None = raw.get("nodeName")
        self.all_nodes = bool(raw.get("allNodes"))
        self.node_selector: Mapping[str, Any] | None = raw.get("nodeSelector")
        self.parsed_selector: tuple[_NodeSelector, str] | None = None


class Slice:
    """One ResourceSlice, read once."""

    __slots__ = (
        "all_nodes",
        "count",
        "devices",
        "driver",
        "generation",
        "name",
        "node_name",
        "node_selector",
        "parsed_selector",
        "per_device",
        "per_device_set",
        "pool",
        "raw",
        "shared_counters",
    )

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        spec = raw.get("spec") or {}
        self.name: str = (raw.get("metadata") or {}).get("name", "")
        self.driver: str = spec.get("driver", "")
        pool = spec.get("pool") or {}
        self.pool: str = pool.get("name", "")
        self.generation: int = pool.get("generation", 0)
        self.count: int = pool.get("resourceSliceCount", 0)
        self.node_name: str | None = spec.get("nodeName")
        self.all_nodes = bool(spec.get("allNodes"))
        self.node_selector: Mapping[str, Any] | None = spec.get("nodeSelector")
        self.parsed_selector: tuple[_NodeSelector, str] | None = None
        self.per_device = bool(spec.get("perDeviceNodeSelection"))  # ptr.Deref(..., false)
        #: perDeviceNodeSelection != nil (even false): a slice skipped without PartitionableDevices
        self.per_device_set = spec.get("perDeviceNodeSelection") is not None
        self.shared_counters: list[tuple[str, dict[str, Fraction]]] = [
            (c.get("name", ""), {n: Quantity.parse((v or {}).get("value", 0)).value for n, v in (c.get("counters") or {}).items()})
            for c in spec.get("sharedCounters") or ()
        ]
        self.devices = [Device(d) for d in spec.get("devices") or ()]


@dataclass
class Pool:
    driver: str
    pool: str
    is_incomplete: bool = False
    is_invalid: bool = False
    invalid_reason: str = ""
    slices: list[Slice] = field(default_factory=list)  # DeviceSlicesTargetingNode
    slices_not_targeting: list[Slice] = field(default_factory=list)
    counter_sets: dict[str, dict[str, Fraction]] = field(default_factory=dict)

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}"


def _values_text(values: Any) -> str:
    return "[" + " ".join(str(v) for v in values) + "]" if isinstance(values, list) else f"{values}"


def _requirements_text(reqs: Any) -> str:
    out = "[]NodeSelectorRequirement{"
    for r in reqs if isinstance(reqs, list) else ():
        r = r if isinstance(r, Mapping) else {}
        out += f"NodeSelectorRequirement{{Key:{r.get('key') or ''},Operator:{r.get('operator') or ''},Values:{_values_text(r.get('values') or [])},}},"
    return out + "}"


def _selector_text(sel: Mapping[str, Any]) -> str:
    """v1.NodeSelector.String() (the generated protobuf text)."""
    terms = "[]NodeSelectorTerm{"
    for t in sel.get("nodeSelectorTerms") or () if isinstance(sel, Mapping) else ():
        t = t if isinstance(t, Mapping) else {}
        terms += f"NodeSelectorTerm{{MatchExpressions:{_requirements_text(t.get('matchExpressions'))},MatchFields:{_requirements_text(t.get('matchFields'))},}},"
    return f"&NodeSelector{{NodeSelectorTerms:{terms}}},}}"


def node_matches(node: Mapping[str, Any] | None, obj: Slice | Device) -> bool:
    """Go's NodeMatches for a slice's or a device's node selection; a node selector is parsed
    once per object, as component-helpers' nodeaffinity.NewNodeSelector (its error texts)."""
    meta = (node or {}).get("metadata") or {}
    if obj.node_name:
        return node is not None and meta.get("name") == obj.node_name
    if obj.all_nodes:
        return True
    selector = obj.node_selector
    if selector is not None:
        parsed = obj.parsed_selector
        if parsed is None:
            sel = _NodeSelector(selector)
            errors = sel.parse_errors()
            parsed = obj.parsed_selector = (sel, f"failed to parse node selector {_selector_text(selector)}: {_aggregate(errors)}" if errors else "")
        if parsed[1]:
            raise AllocatorError(parsed[1])
        return parsed[0].matches(meta.get("labels") or {}, meta.get("name", ""))
    return False


def _relevant(s: Slice, node: Mapping[str, Any]) -> bool | None:
    """Whether a slice is relevant for the node; None for a slice with no known node selection."""
    if s.shared_counters:
        return True
    if s.node_name or s.all_nodes or s.node_selector is not None:
        try:
            return node_matches(node, s)
        except AllocatorError as e:
            raise AllocatorError(f"failed to perform node selection for slice {s.name}: {e}") from e
    if s.per_device:
        for d in s.devices:
            try:
                if node_matches(node, d):
                    return True
            except AllocatorError as e:
                raise AllocatorError(f"failed to perform node selection for device {d.name} in slice {s.name}: {e}") from e
        return False
    return None


def gather_pools(
    slices_for_node: Sequence[Slice], node: Mapping[str, Any], features: Features, slices_in_pool: Callable[[str, str], Sequence[Slice]]
) -> list[Pool]:
    """Go's GatherPools; ``slices_in_pool(driver, pool)`` lists every slice of a pool (Go's scan
    of all slices for a pool that looks incomplete from the node)."""
    pools: dict[tuple[str, str], list[Slice]] = {}
    for s in slices_for_node:
        if not features.partitionable_devices and (s.per_device_set or s.shared_counters):
            continue
        if not _relevant(s, node):
            continue
        key = (s.driver, s.pool)
        have = pools.get(key)
        if have is None or s.generation > have[0].generation:
            pools[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    result: list[Pool] = []
    with_binding: list[Pool] = []
    for (driver, pool_name), pool_slices in pools.items():
        want = pool_slices[0].count
        all_for_pool: list[Slice] | None = None
        if len(pool_slices) != want:
            obsolete, all_for_pool = _check_slices_in_pool(slices_in_pool(driver, pool_name), driver, pool_name, pool_slices[0].generation)
            if obsolete:
                continue
            if len(all_for_pool) != want:
                result.append(Pool(driver, pool_name, is_incomplete=True))
                continue
        pool = _build_pool(driver, pool_name, pool_slices, features, all_for_pool)
        if _has_binding_conditions(pool):
            with_binding.append(pool)
        else:
            result.append(pool)
    result.sort(key=lambda p: (p.driver, p.pool))
    with_binding.sort(key=lambda p: (p.driver, p.pool))
    return result + with_binding


def _check_slices_in_pool(all_slices: Sequence[Slice], driver: str, pool: str, generation: int) -> tuple[bool, list[Slice]]:
    out: list[Slice] = []
    for s in all_slices:
        if s.driver != driver or s.pool != pool:
            continue
        if s.generation == generation:
            out.append(s)
        elif s.generation > generation:
            return True, []
    return False, out


def _invalid(driver: str, pool: str, reason: str) -> Pool:
    return Pool(driver, pool, is_invalid=True, invalid_reason=reason)


def _build_pool(driver: str, pool: str, slices: list[Slice], features: Features, all_for_pool: list[Slice] | None) -> Pool:
    slices = sorted(slices, key=lambda s: s.name)
    if features.partitionable_devices:
        counter_slices = [s for s in slices if s.shared_counters]
        device_slices = [s for s in slices if not s.shared_counters]
    else:
        counter_slices, device_slices = [], slices
    names: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in names:
                return _invalid(driver, pool, f"duplicate device name {d.name}")
            names.add(d.name)
    if not features.partitionable_devices:
        return Pool(driver, pool, slices=device_slices)
    counter_sets: dict[str, dict[str, Fraction]] = {}
    for s in counter_slices:
        for name, counters in s.shared_counters:
            if name in counter_sets:
                return _invalid(driver, pool, f"duplicate counter set name {name}")
            counter_sets[name] = counters
    err = _validate_counter_consumption(counter_sets, slices)
    if err:
        return _invalid(driver, pool, err)
    if all_for_pool is None or len(slices) == len(all_for_pool):
        return Pool(driver, pool, slices=device_slices, counter_sets=counter_sets)
    seen = {s.name for s in slices}
    not_targeting = [s for s in all_for_pool if s.name not in seen]
    err = _validate_counter_consumption(counter_sets, not_targeting)
    if err:
        return _invalid(driver, pool, err)
    return Pool(driver, pool, slices=device_slices, slices_not_targeting=not_targeting, counter_sets=counter_sets)


def _validate_counter_consumption(counter_sets: Mapping[str, Mapping[str, Fraction]], slices: Sequence[Slice]) -> str:
    for s in slices:
        for d in s.devices:
            for set_name, counters in d.consumes_counters:
                cs = counter_sets.get(set_name)
                if cs is None:
                    return f"counter set {set_name} not found"
                for c in counters:
                    if c not in cs:
                        return f"counter {c} not found in counter set {set_name}"
    return ""


def _has_binding_conditions(pool: Pool) -> bool:
    return any(d.binding_conditions is not None for s in pool.slices for d in s.devices)
