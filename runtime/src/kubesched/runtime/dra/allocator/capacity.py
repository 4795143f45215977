"""Consumable capacity as Go's ``consumable_capacity.go`` (incubating, v0.36.3): how much of a
device's capacity a request consumes (its request, else the policy's default, else all of it,
rounded up to the policy's valid values or range) and whether that still fits.

A range's step is applied with Go's int64 arithmetic on ``Quantity.Value()`` (division truncated
toward zero, the remainder with the dividend's sign, sums and products wrapping), so results
match Go for every amount within int64. Beyond it (a value, min or step above 9.2e18) Go's
``Value()`` itself overflows (and a step whose ``Value()`` wraps to 0 panics); kubesched uses
the exact value there. The consumed amount keeps Go's representation (:mod:`.quantity`)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from .pools import Capacity, CapacityPolicy
from .types import Quantity

__all__ = ["consumed_capacity", "fits_capacity"]

_ZERO = Fraction(0)


def _value(q: Quantity) -> int:
    """resource.Quantity.Value(): rounded up away from zero (exact where Go's int64 would
    overflow, above 2^63; the arithmetic on it then wraps as Go's int64 does)."""
    v = q.value
    n = -((-abs(v.numerator)) // v.denominator)
    return n if v >= 0 else -n


def _int64(n: int) -> int:
    """Go's int64 wrap-around."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _quo_rem(a: int, b: int) -> tuple[int, int]:
    """Go's int64 ``a / b`` and ``a % b``: truncated toward zero, the remainder with a's sign."""
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return _int64(q), a - b * q


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
    added = _int64(_value(requested) - lo)
    n, mod = _quo_rem(added, step)
    if mod != 0:
        n += 1
    return Quantity.new(_int64(lo + _int64(step * n)))


def _violates(q: Quantity, policy: CapacityPolicy | None) -> bool:
    if policy is None:
        return False
    if policy.default is not None and q.same_struct(policy.default):
        return False
    if policy.has_range:
        if policy.max is not None and q.value > policy.max.value:
            return True
        if policy.step is not None:
            lo = _value(policy.min) if policy.min is not None else 0
            if _quo_rem(_int64(_value(q) - lo), _value(policy.step))[1] != 0:
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
