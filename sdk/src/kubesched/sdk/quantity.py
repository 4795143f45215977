"""Exact Kubernetes resource quantities, parsed as apimachinery v0.36.3's ``resource.ParseQuantity``.

A quantity is ``<sign><number><suffix>`` where the number is decimal digits with at most one
point, and the suffix is a binary SI suffix (``Ki Mi Gi Ti Pi Ei``), a decimal SI suffix
(``n u m "" k M G T P E``) or a decimal exponent (``e3``, ``E-2``). Values are kept as
:class:`fractions.Fraction`, so ``0.1 + 0.2`` is exactly ``0.3`` and ``1.5Ki`` is exactly ``1536``.

What Go accepts is accepted, what it rejects is a :class:`QuantityError` with Go's message
(``quantities must match the regular expression ...``, ``unable to parse quantity's suffix``)
after the quoted input. Go's quirks are kept: ``"+"``, ``"-"``, ``"."``, ``"e3"`` and ``"Ki"``
are 0; an exponent is read as an int64 and then wrapped to int32 (``1e4294967296`` is 1); a
value with a binary suffix above 2^63-1 is capped there (``10Ei``).

Bounds (Go keeps any decimal exactly, as a big decimal): a magnitude above 10^64 is saturated
to 10^64, and a magnitude is rounded up (away from zero) to a multiple of 10^-64, as Go rounds
up to 10^-9; so a 5,000-digit string or ``1e2147483647`` costs no more than ``1``.

:func:`milli_value` and :func:`value` round up, as ``resource.Quantity.MilliValue()`` and
``Value()`` do, and saturate at the int64 bounds where Go's wrap around (Go's ``MilliValue()``
of ``1Ei`` is negative, its ``Value()`` of ``1e19`` is 0).

The scheduler's own accounting (:class:`~kubesched.sdk.objects.resource.Resource`, a pod's
requests) bounds each amount at ``RESOURCE_LIMIT`` (2^53 - 1: 9 PB of memory, 9 trillion CPUs)
with :func:`bounded`. Realistic amounts are far below it, and what is beyond it behaves as that
much; in exchange the sums over a node's pods and the scores' ``amount * 100`` stay inside
int64, so one absurd node or pod (``cpu: 1e400``) cannot overflow the arithmetic that every
other pod's cycle shares.
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from functools import lru_cache

from ._text import quote

__all__ = ["INT64_MAX", "QUANTITY_LIMIT", "RESOURCE_LIMIT", "QuantityError", "bounded", "milli_value", "parse_quantity", "saturate", "value"]


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


#: the largest magnitude a parsed quantity keeps (larger ones are saturated to it)
QUANTITY_LIMIT = 10**64
INT64_MAX = (1 << 63) - 1
INT64_MIN = -(1 << 63)
#: the largest amount the scheduler's accounting keeps for one quantity (see the module's doc)
RESOURCE_LIMIT = (1 << 53) - 1

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}

#: apimachinery's errors (resource/quantity.go ErrFormatWrong, ErrSuffix)
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_LIMIT_EXP = 64
_CAP_BINARY = Fraction(INT64_MAX)
_CAP = Fraction(QUANTITY_LIMIT)
_CTX = decimal.Context(prec=2 * _LIMIT_EXP + 8, Emax=10 * _LIMIT_EXP, Emin=-10 * _LIMIT_EXP)
_QUANTUM = decimal.Decimal((0, (1,), -_LIMIT_EXP))


def _describe(v: object) -> str:
    """A value that is not a string or a number, as a message names it."""
    if v is None or isinstance(v, bool):
        return {None: "null", True: "true", False: "false"}[v]
    if isinstance(v, (dict, list, tuple)) or hasattr(v, "keys") or hasattr(v, "__getitem__"):
        return "an object" if hasattr(v, "keys") else "a list"
    return f"a {type(v).__name__}"


def _error(text: str, message: str) -> QuantityError:
    return QuantityError(f"{quote(text)}: {message}")


def _scan(s: str) -> tuple[bool, str, str, str]:
    """parseQuantityString: (positive, numerator digits, denominator digits, suffix)."""
    end = len(s)
    pos = 0
    positive = True
    if end and s[0] in "+-":
        positive = s[0] == "+"
        pos = 1
    while pos < end and s[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[start:pos] or "0"
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        start = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[start:pos]
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise _error(s, FORMAT_WRONG)
    return positive, num, denom, s[suffix_start:]


def _interpret(s: str, suffix: str) -> tuple[int, int]:
    """quantitySuffixer.interpret: (base 2 or 10, exponent)."""
    e = _DECIMAL.get(suffix)
    if e is not None:
        return 10, e
    e = _BINARY.get(suffix)
    if e is not None:
        return 2, e
    if len(suffix) > 1 and suffix[0] in "eE":
        exp = suffix[1:]
        body = exp[1:] if exp[0] in "+-" else exp
        if body and body.isdigit() and body.isascii():
            n = int(body[:25])  # more than 19 digits is out of int64 either way
            n = -n if exp[0] == "-" else n
            if INT64_MIN <= n <= INT64_MAX:
                return 10, (n + (1 << 31)) % (1 << 32) - (1 << 31)  # Go's int32(parsed)
    raise _error(s, SUFFIX_WRONG)


@lru_cache(maxsize=4096)
def _parse(text: str) -> Fraction:
    if not text:
        raise _error(text, FORMAT_WRONG)
    positive, num, denom, suffix = _scan(text)
    base, exp = _interpret(text, suffix)
    digits = (num + denom).lstrip("0")
    if not digits:
        return Fraction(0)
    exp10 = (exp if base == 10 else 0) - len(denom)
    adjusted = len(digits) - 1 + exp10  # the power of ten of the leading digit
    if adjusted >= _LIMIT_EXP:
        q = _CAP_BINARY if base == 2 else _CAP
    else:
        d = decimal.Decimal((0, tuple(map(int, digits)), exp10))
        if exp10 < -_LIMIT_EXP:
            d = d.quantize(_QUANTUM, rounding=decimal.ROUND_UP, context=_CTX)
        q = Fraction(d)
        if base == 2:
            q = min(q * (1 << exp), _CAP_BINARY)  # Go caps a BinarySI value at max int64
        elif q > _CAP:
            q = _CAP
    return q if positive else -q


def parse_quantity(quantity: str | int | float) -> Fraction:
    """Parse a quantity (``"100m"``, ``"1Gi"``, ``"1e3"``, ``"0.5"``, ``"1.5Ki"``) exactly.

    Integers are taken as they are (YAML gives ``cpu: 2`` as an int), within ``QUANTITY_LIMIT``.
    Raises :class:`QuantityError` for what Go rejects (``"12x"``, ``""``, ``"1.2.3"``, ``"1K"``)
    and for values that are not strings or numbers.
    """
    if isinstance(quantity, bool) or not isinstance(quantity, (str, int, float)):
        raise QuantityError(f"{_describe(quantity)}: {FORMAT_WRONG}")
    if isinstance(quantity, int):
        if -QUANTITY_LIMIT <= quantity <= QUANTITY_LIMIT:
            return Fraction(quantity)
        return _CAP if quantity > 0 else -_CAP
    if isinstance(quantity, float):
        # YAML turns ``0.5`` into a float; its shortest repr is what the user wrote.
        return _parse(repr(quantity))
    return _parse(quantity.strip())


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def saturate(n: int) -> int:
    """``n`` within the int64 bounds (Go's ``Value()`` / ``MilliValue()`` range)."""
    return INT64_MAX if n > INT64_MAX else INT64_MIN if n < INT64_MIN else n


def bounded(n: int) -> int:
    """``n`` within ``±RESOURCE_LIMIT``: one amount as the scheduler's accounting keeps it."""
    return RESOURCE_LIMIT if n > RESOURCE_LIMIT else -RESOURCE_LIMIT if n < -RESOURCE_LIMIT else n


def milli_value(quantity: str | int | float) -> int:
    """The quantity in thousandths, rounded up (Kubernetes' ``MilliValue()``), saturated."""
    return saturate(_ceil(parse_quantity(quantity) * 1000))


def value(quantity: str | int | float) -> int:
    """The quantity as an integer, rounded up (Kubernetes' ``Value()``), saturated."""
    return saturate(_ceil(parse_quantity(quantity)))
