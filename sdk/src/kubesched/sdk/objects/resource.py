"""Compute resources in kube-scheduler's units, and the read-only Resource of views."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, NoReturn

from .._text import cut
from ..quantity import QuantityError, bounded, parse_quantity
from ..readonly import ReadOnlyDict
from ..selectors import InvalidObjectError

#: kube-scheduler's defaults for containers without requests, used by scoring only.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_CPU = "cpu"
_MEMORY = "memory"
_EPHEMERAL = "ephemeral-storage"
_PODS = "pods"


def is_scalar_resource(name: str) -> bool:
    """Extended (``example.com/foo``), hugepages-*, attachable-volumes-* resources.

    kube-scheduler's IsScalarResourceName: extended, native hugepages, prefixed native, or
    attachable volumes.
    """
    if name.startswith("hugepages-") or name.startswith("attachable-volumes-"):
        return True
    if "/" in name:
        # extended (not kubernetes.io/ prefixed) or native prefixed (kubernetes.io/...)
        return True
    return False


class Resource:
    """Compute resources in kube-scheduler's units: milli-CPU, bytes, a pod count, scalars.

    The Resources a view gives (``pod.requests``, ``node.allocatable``, a snapshot NodeInfo's
    ``requested``) are read-only; :meth:`clone` gives a mutable copy."""

    __slots__ = ("allowed_pod_number", "ephemeral_storage", "memory", "milli_cpu", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: Mapping[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = dict(scalar) if scalar else {}

    @classmethod
    def from_list(cls, rl: Mapping[str, Any] | None, field: str = "") -> Resource:
        """From a v1.ResourceList (``{"cpu": "2", "memory": "4Gi"}``)."""
        r = cls()
        if not rl:
            return r
        if not isinstance(rl, Mapping):
            raise InvalidObjectError(field, "must be a map of resource quantities")
        for name, q in rl.items():
            name = str(name)
            r.add_quantity(name, _q(q, f"{field}.{cut(name)}" if field else cut(name)))
        return r

    def add_quantity(self, name: str, q: Fraction) -> None:
        """Add one quantity, as ``MilliValue()`` for cpu and ``Value()`` otherwise (rounded up,
        bounded at ``quantity.RESOURCE_LIMIT``)."""
        if name == _CPU:
            self.milli_cpu += bounded(_ceil_milli(q))
        elif name == _MEMORY:
            self.memory += bounded(_ceil(q))
        elif name == _PODS:
            self.allowed_pod_number += bounded(_ceil(q))
        elif name == _EPHEMERAL:
            self.ephemeral_storage += bounded(_ceil(q))
        elif is_scalar_resource(name):
            self.scalar[name] = self.scalar.get(name, 0) + bounded(_ceil(q))

    def get(self, name: str) -> int:
        """The amount of one resource by its API name."""
        if name == _CPU:
            return self.milli_cpu
        if name == _MEMORY:
            return self.memory
        if name == _EPHEMERAL:
            return self.ephemeral_storage
        if name == _PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def clone(self) -> Resource:
        """A mutable copy (also of a read-only Resource)."""
        return Resource(self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, self.scalar)

    def read_only(self) -> Resource:
        """A read-only copy (``self`` if it is read-only already)."""
        if type(self) is _ReadOnlyResource:
            return self
        r = _ReadOnlyResource.__new__(_ReadOnlyResource)
        _set(r, "milli_cpu", self.milli_cpu)
        _set(r, "memory", self.memory)
        _set(r, "ephemeral_storage", self.ephemeral_storage)
        _set(r, "allowed_pod_number", self.allowed_pod_number)
        _set(r, "scalar", ReadOnlyDict(self.scalar))
        return r

    @property
    def is_read_only(self) -> bool:
        return False

    def add(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        for k, v in other.scalar.items():
            self.scalar[k] = self.scalar.get(k, 0) + sign * v

    def as_dict(self) -> dict[str, int]:
        d = {_CPU: self.milli_cpu, _MEMORY: self.memory, _EPHEMERAL: self.ephemeral_storage, _PODS: self.allowed_pod_number}
        d.update(self.scalar)
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v} == {k: v for k, v in other.scalar.items() if v}
        )

    def __repr__(self) -> str:
        return (
            f"Resource(milli_cpu={self.milli_cpu}, memory={self.memory}, "
            f"ephemeral_storage={self.ephemeral_storage}, allowed_pod_number={self.allowed_pod_number}, "
            f"scalar={self.scalar})"
        )


#: What a write to a read-only Resource raises (``TypeError``).
RESOURCE_READ_ONLY_MESSAGE = "this Resource belongs to a read-only view; resource.clone() gives a mutable copy"

_set = object.__setattr__


def _resource_error(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise TypeError(RESOURCE_READ_ONLY_MESSAGE)


class _ReadOnlyResource(Resource):
    """A Resource of a view: every write raises; the runtime's cache updates a sealed
    NodeInfo's totals through :func:`_add_resource`."""

    __slots__ = ()

    __setattr__ = _resource_error
    __delattr__ = _resource_error
    add = _resource_error
    add_quantity = _resource_error

    @property
    def is_read_only(self) -> bool:
        return True

    def __copy__(self) -> Resource:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Resource:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_read_only_resource, (self.milli_cpu, self.memory, self.ephemeral_storage, self.allowed_pod_number, dict(self.scalar)))


def _read_only_resource(milli_cpu: int, memory: int, ephemeral_storage: int, allowed_pod_number: int, scalar: dict[str, int]) -> Resource:
    return Resource(milli_cpu, memory, ephemeral_storage, allowed_pod_number, scalar).read_only()


def _add_resource(r: Resource, other: Resource, sign: int) -> None:
    """``r.add(other, sign)`` that also works on a read-only Resource (NodeInfo's own totals)."""
    _set(r, "milli_cpu", r.milli_cpu + sign * other.milli_cpu)
    _set(r, "memory", r.memory + sign * other.memory)
    _set(r, "ephemeral_storage", r.ephemeral_storage + sign * other.ephemeral_storage)
    if other.scalar:
        sc = r.scalar
        for k, v in other.scalar.items():
            dict.__setitem__(sc, k, sc.get(k, 0) + sign * v)


def _whole_resource(amounts: Mapping[str, int]) -> Resource:
    """A read-only Resource of amounts already in each resource's unit (milli-CPU for cpu, a
    whole number of the rest), kept as :meth:`Resource.add_quantity` keeps them (bounded;
    names it does not count left out)."""
    cpu = mem = eph = pods = 0
    scalar: dict[str, int] = {}
    for name, n in amounts.items():
        if name == _CPU:
            cpu = bounded(n)
        elif name == _MEMORY:
            mem = bounded(n)
        elif name == _PODS:
            pods = bounded(n)
        elif name == _EPHEMERAL:
            eph = bounded(n)
        elif is_scalar_resource(name):
            scalar[name] = bounded(n)
    r = _ReadOnlyResource.__new__(_ReadOnlyResource)
    _set(r, "milli_cpu", cpu)
    _set(r, "memory", mem)
    _set(r, "ephemeral_storage", eph)
    _set(r, "allowed_pod_number", pods)
    _set(r, "scalar", ReadOnlyDict(scalar))
    return r


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def _ceil_milli(f: Fraction) -> int:
    """``_ceil(f * 1000)`` without building the product (a Fraction normalizes it: slow)."""
    return -((-f.numerator * 1000) // f.denominator)


def _q(v: Any, field: str) -> Fraction:
    try:
        return parse_quantity(v)
    except QuantityError as e:
        raise InvalidObjectError(field, str(e)) from None
