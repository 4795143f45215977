"""The allocator's quantities as apimachinery v0.36.3's ``resource.Quantity`` keeps them: the
exact value, the format (``BinarySI``, ``DecimalSI``, ``DecimalExponent``, from the suffix), the
text ``ParseQuantity`` caches when the input is already canonical (``1Ki``, ``1e3``, ``1E3``,
``+1``), and the int64 representation ``(value, scale)`` when the quantity has one.

The text Go writes (``MarshalJSON``) is the cached text, else the canonical form
(``CanonicalizeBytes``): a consumed capacity copied from a request keeps the request's format
(``1e3`` stays ``1e3``, ``1.953125Ki`` becomes ``2000``), one computed by rounding up to a
range's step is ``NewQuantity(v, BinarySI)`` (``3000``, ``2Ki``). Go's ``==`` on two quantities
(the struct, used by ``violatesPolicy`` for the default) is :meth:`Quantity.same_struct`.

The value is :func:`kubesched.sdk.quantity.parse_quantity`'s; a quantity that Go keeps as a
big decimal (more than 18 digits, more than 9 fractional digits, a fractional binary amount)
is rounded up to a multiple of 10^-9 as Go rounds it. Go's big decimals are unbounded where
``parse_quantity`` saturates at 10^64.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from kubesched.sdk.quantity import (
    INT64_MAX,
    _scan,  # parseQuantityString, shared with the parser
    parse_quantity,
)

__all__ = ["BINARY_SI", "DECIMAL_EXPONENT", "DECIMAL_SI", "Quantity", "format_quantity"]

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DEC = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BIN_SUFFIX = {e: s for s, e in _BIN.items()}
_DEC_SUFFIX = {e: s for s, e in _DEC.items()}
_NANO = 10**9
_INT64_MIN = (-(1 << 63), 0)


class Quantity:
    """A quantity parsed once (see the module's doc). ``str()`` is the text Go writes."""

    __slots__ = ("format", "int64", "text", "value")

    def __init__(self, value: Fraction, format: str = BINARY_SI, text: str = "", int64: tuple[int, int] | None = None) -> None:
        self.value = value
        self.format = format
        #: the text ParseQuantity cached ("" when it did not)
        self.text = text
        #: (unscaled int64, scale) when Go keeps an int64Amount, None for a big decimal
        self.int64 = int64

    @classmethod
    def new(cls, value: int, format: str = BINARY_SI) -> Quantity:
        """resource.NewQuantity(value, format)."""
        return cls(Fraction(value), format, "", (value, 0))

    @classmethod
    def parse(cls, raw: Any) -> Quantity:
        if isinstance(raw, Quantity):
            return raw
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            parse_quantity(raw)  # raises Go's error
        return _parse_text(raw.strip() if isinstance(raw, str) else repr(raw) if isinstance(raw, float) else str(raw))

    def same_struct(self, other: Quantity) -> bool:
        """Go's ``==`` on two Quantity structs: a big decimal is a pointer, never equal to a copy."""
        return self.int64 is not None and (self.int64, self.format, self.text) == (other.int64, other.format, other.text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Quantity({self})"

    def __str__(self) -> str:
        if self.int64 == _INT64_MIN:  # removeInt64Factors cannot negate it: no suffix
            return str(_INT64_MIN[0])
        return self.text or format_quantity(self.value, self.format)


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> Quantity:
    """A quantity's text parsed (Quantity is immutable, so equal texts share one)."""
    return _go_parse(text, parse_quantity(text))


def _go_parse(text: str, value: Fraction) -> Quantity:
    """ParseQuantity's representation of ``text`` (already parsed to ``value``)."""
    if text == "0":
        return Quantity(value, DECIMAL_SI, "0", (0, 0))
    _, num, denom, suffix = _scan(text)
    if suffix in _DEC:
        fmt, exponent = DECIMAL_SI, _DEC[suffix]
    elif suffix in _BIN:
        fmt, exponent = BINARY_SI, _BIN[suffix]
    else:
        fmt, exponent = DECIMAL_EXPONENT, 0
    mantissa = 1
    if fmt == BINARY_SI:
        scale = 0
        if len(denom) == 0:
            mantissa = 1 << exponent
            precision = 15 - len(num) - exponent * 3 // 10 - 1
        else:
            precision = -1
    elif fmt == DECIMAL_SI:
        scale = exponent
        precision = 18 - (len(num) + len(denom))
    else:
        scale = _exponent(suffix)
        precision = 18 - (len(num) + len(denom))
    if precision >= 0:
        scale -= len(denom)
        if scale >= -9:
            shifted = num + denom
            result = int(shifted) * mantissa
            if result <= INT64_MAX:
                cached = ""
                if fmt == BINARY_SI:
                    if exponent % 10 == 0 and int(shifted) & 7 != 0:
                        cached = text
                elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                    cached = text
                signed = -result if text.startswith("-") else result
                return Quantity(value, fmt, cached, (signed, scale))
    # a big decimal: rounded up (away from zero) to nano, BinarySI under 1 shown as DecimalSI
    mag = abs(value)
    if (mag * _NANO).denominator != 1:
        mag = Fraction(-((-mag.numerator * _NANO) // mag.denominator), _NANO)
    if fmt == BINARY_SI and 0 < mag < 1:
        fmt = DECIMAL_SI
    return Quantity(-mag if value < 0 else mag, fmt, "", None)


def _exponent(suffix: str) -> int:
    """quantitySuffixer.interpret of ``e<n>``/``E<n>`` (parse_quantity accepted it): int64, then int32."""
    body = suffix[1:]
    n = int(body.lstrip("+-").lstrip("0")[:25] or "0")
    n = -n if body.startswith("-") else n
    return (n + (1 << 31)) % (1 << 32) - (1 << 31)


def format_quantity(v: Fraction, format: str = DECIMAL_SI) -> str:
    """Go's canonical text of a quantity (``CanonicalizeBytes``) in a format."""
    if v == 0:
        return "0"
    sign = "-" if v < 0 else ""
    mag = abs(v)
    if format == BINARY_SI and (mag < 1024 or mag.denominator != 1):
        format = DECIMAL_SI
    if format == BINARY_SI:
        n, e = mag.numerator, 0
        while n >= 1024 and n % 1024 == 0:
            n //= 1024
            e += 10
        return f"{sign}{n}{_BIN_SUFFIX.get(e, '')}"
    d = mag.denominator
    k = 0
    while d % 10 == 0:
        d //= 10
        k += 1
    while d % 2 == 0 or d % 5 == 0:
        d //= 2 if d % 2 == 0 else 5
        k += 1
    if d != 1:  # not a decimal (Go never holds one): rounded up to nano as Go's parser would
        mag = Fraction(-((-mag.numerator * _NANO) // mag.denominator), _NANO)
        return format_quantity(-mag if sign else mag, format)
    n, e = int(mag * 10**k), -k
    while n >= 10 and n % 10 == 0:
        n //= 10
        e += 1
    while e % 3:
        n *= 10
        e -= 1
    if format == DECIMAL_EXPONENT:
        return f"{sign}{n}" + (f"e{e}" if e else "")
    return f"{sign}{n}{_DEC_SUFFIX.get(e, '')}"
