"""Exact Kubernetes resource quantities.

A quantity is ``<sign><number><suffix>`` where the number is decimal digits with at most one
point, and the suffix is a binary SI suffix (``Ki Mi Gi Ti Pi Ei``), a decimal SI suffix
(``n u m "" k M G T P E``) or a decimal exponent (``e3``, ``E-2``). Values are kept as
:class:`fractions.Fraction`, so ``0.1 + 0.2`` is exactly ``0.3`` and ``1.5Ki`` is exactly ``1536``.

:func:`milli_value` and :func:`value` round up, as ``resource.Quantity.MilliValue()`` and
``Value()`` do in Kubernetes.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

__all__ = ["QuantityError", "milli_value", "parse_quantity", "value"]


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


_BINARY = {
    "Ki": 1 << 10,
    "Mi": 1 << 20,
    "Gi": 1 << 30,
    "Ti": 1 << 40,
    "Pi": 1 << 50,
    "Ei": 1 << 60,
}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}

_RE = re.compile(
    r"^(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?$"
)

_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@lru_cache(maxsize=4096)
def _parse(text: str) -> Fraction:
    m = _RE.match(text)
    if m is None:
        raise QuantityError(f"{text!r}: {_MESSAGE}")
    digits_int = m.group("int") or ""
    digits_frac = m.group("frac")
    if not digits_int and not digits_frac:
        raise QuantityError(f"{text!r}: {_MESSAGE}")
    number = Fraction(int(digits_int or "0"))
    if digits_frac:
        number += Fraction(int(digits_frac), 10 ** len(digits_frac))
    suffix = m.group("suffix")
    exp = m.group("exp")
    if suffix is not None:
        number *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
    elif exp is not None:
        e = int(exp)
        if abs(e) > 1000:
            raise QuantityError(f"{text!r}: exponent out of range")
        number *= Fraction(10) ** e
    return -number if m.group("sign") == "-" else number


def parse_quantity(quantity: str | int | float) -> Fraction:
    """Parse a quantity (``"100m"``, ``"1Gi"``, ``"1e3"``, ``"0.5"``, ``"1.5Ki"``) exactly.

    Integers are taken as they are (YAML gives ``cpu: 2`` as an int). Raises
    :class:`QuantityError` for anything else (``"12x"``, ``""``, ``"1.2.3"``).
    """
    if isinstance(quantity, bool):
        raise QuantityError(f"{quantity!r}: {_MESSAGE}")
    if isinstance(quantity, int):
        return Fraction(quantity)
    if isinstance(quantity, float):
        # YAML turns ``0.5`` into a float; its shortest repr is what the user wrote.
        return _parse(repr(quantity))
    if not isinstance(quantity, str):
        raise QuantityError(f"{quantity!r}: {_MESSAGE}")
    return _parse(quantity.strip())


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def milli_value(quantity: str | int | float) -> int:
    """The quantity in thousandths, rounded up (Kubernetes' ``MilliValue()``)."""
    return _ceil(parse_quantity(quantity) * 1000)


def value(quantity: str | int | float) -> int:
    """The quantity as an integer, rounded up (Kubernetes' ``Value()``)."""
    return _ceil(parse_quantity(quantity))
