"""Consumable capacity as Go's ``consumable_capacity.go`` (incubating, v0.36.3): how much of a
device's capacity a request consumes (its request, else the policy's default, else all of it,
rounded up to the policy's valid values or range) and whether that still fits."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from .pools import Capacity, CapacityPolicy
from .types import Quantity

__all__ = ["consumed_capacity", "fits_capacity"]

_ZERO = Fraction(0)


def _value(q: Quantity) -> int:
    """resource.Quantity.Value(): rounded up to an integer."""
    v = q.value
    return -((-v.numerator) // v.denominator)


def _calculate(requested: Quantity | None, cap: Capacity) -> Quantity:
    policy = cap.policy
    if requested is None:
        if policy is not None and policy.default is not None:
            return policy.default
        return cap.value
    if policy is None:
        return requested
    if policy.has_range and policy.min is not None:
        return _round_up_range(requested, policy)
    if policy.valid_values is not None:
        for v in policy.valid_values:
            if requested.value <= v.value:
                return v
    return requested


def _round_up_range(requested: Quantity, policy: CapacityPolicy) -> Quantity:
    assert policy.min is not None
    if requested.value < policy.min.value:
        return policy.min
    if policy.step is None:
        return requested
    lo, step = _value(policy.min), _value(policy.step)
    added = _value(requested) - lo
    n = int(added / step)  # Go's integer division truncates toward zero
    if added - n * step != 0:
        n += 1
    return Quantity(Fraction(lo + step * n), True)


def _violates(q: Quantity, policy: CapacityPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and q.value == policy.default.value:
        return False
    if policy.has_range:
        if policy.max is not None and q.value > policy.max.value:
            return True
        if policy.step is not None:
            lo = _value(policy.min) if policy.min is not None else 0
            added = _value(q) - lo
            step = _value(policy.step)
            if added - int(added / step) * step != 0:
                return True
        return False
    if policy.valid_values:
        return all(q.value != v.value for v in policy.valid_values)
    return False


def fits_capacity(
    consumed: Mapping[str, Fraction] | None,
    requests: Mapping[str, Quantity] | None,
    capacity: Mapping[str, Capacity],
    allocating: Mapping[str, Fraction] | None,
) -> bool:
    """Go's CmpRequestOverCapacity (its error, a request for a capacity the device does not
    define, counts as "does not fit", as every caller treats it)."""
    if requests:
        for name in requests:
            if name not in capacity:
                return False
    for name, cap in capacity.items():
        q = _calculate(requests.get(name) if requests else None, cap)
        if _violates(q, cap.policy):
            return False
        total = q.value
        if consumed:
            total += consumed.get(name, _ZERO)
        if allocating:
            total += allocating.get(name, _ZERO)
        if total > cap.value.value:
            return False
    return True


def consumed_capacity(requests: Mapping[str, Quantity] | None, capacity: Mapping[str, Capacity]) -> dict[str, Quantity]:
    """Go's GetConsumedCapacityFromRequest."""
    return {name: _calculate(requests.get(name) if requests else None, cap) for name, cap in capacity.items()}
