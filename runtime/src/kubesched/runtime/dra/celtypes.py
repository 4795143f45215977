"""Kubernetes' CEL quantity and semver libraries (apiserver@v0.36.3 pkg/cel/library quantity.go, semverlib.go).

The CEL runtime kubesched uses takes no opaque Python values, so a version travels through an expression
as the tagged canonical string ``"\\ue000v:<major>.<minor>.<patch>[-<pre>]"`` and a quantity as the list
``["\\ue000q:<numerator>/<denominator>", m1, m2]``. Canonical means that CEL's ``==`` on two of them is Go's
``Quantity.Equal`` (``Cmp == 0``) and ``Semver.Equal`` (``EQ``: build metadata ignored). A quantity's two
markers are ``0`` or ``0.0``: CEL's heterogeneous equality finds them equal, so ``==`` still compares the value
only, while their types keep what Go's ``isInteger``/``asInteger`` look at besides the value, the form Go's
``ParseQuantity`` and ``Add``/``Sub`` left the quantity in (``AsInt64``: an inf.Dec is never an integer, an
int64Amount is one when its scale is not negative and the value fits): ``(0, 0)`` an int64Amount with scale
>= 0, ``(0.0, 0)`` one with a negative scale (``"1000m"``, ``"1.0"``), ``(0.0, 0.0)`` an inf.Dec
(``"1.5Ki"``, ``"0.1n"``). The functions below are the library's overloads on those values; a plain string
(or another tag) where a quantity or a version belongs is Go's ``no such overload``.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

from kubesched.sdk.quantity import FORMAT_WRONG, SUFFIX_WRONG, QuantityError, parse_quantity

__all__ = [
    "DEC",
    "NEGATIVE_SCALE",
    "POSITIVE_SCALE",
    "QUANTITY_FUNCTIONS",
    "QUANTITY_TAG",
    "SEMVER_FUNCTIONS",
    "SEMVER_TAG",
    "CelFunctionError",
    "SemverError",
    "go_quote",
    "normalize_and_parse_semver",
    "parse_form",
    "parse_semver",
    "quantity_form",
    "quantity_tag",
    "quantity_value",
    "semver_parts",
    "semver_tag",
]

QUANTITY_TAG = "\ue000q:"
SEMVER_TAG = "\ue000v:"
NO_SUCH_OVERLOAD = "no such overload"
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1
_DIGITS = frozenset("0123456789")
_ALPHANUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-")


class CelFunctionError(Exception):
    """An error value a library function returns; ``str()`` is Go's text."""


class SemverError(ValueError):
    """A string blang/semver/v4 rejects; ``str()`` is its text."""


def go_quote(s: str) -> str:
    """Go's ``%q`` of a string (strconv.Quote) for the printable-ASCII-and-escapes cases."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif o <= 0xFFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


# ---- quantity -------------------------------------------------------------------------------------


#: the forms a Go Quantity takes (its representation, which AsInt64 depends on), and their markers
POSITIVE_SCALE, NEGATIVE_SCALE, DEC = 0, 1, 2
_MARKERS = {POSITIVE_SCALE: (0, 0), NEGATIVE_SCALE: (0.0, 0), DEC: (0.0, 0.0)}

Quantity = list[object]


def quantity_tag(value: Fraction, form: int = POSITIVE_SCALE) -> Quantity:
    """A quantity's runtime value: its tag and the markers of its form."""
    return [f"{QUANTITY_TAG}{value.numerator}/{value.denominator}", *_MARKERS[form]]


def _is_quantity(tag: object) -> bool:
    return type(tag) is list and len(tag) == 3 and type(tag[0]) is str and tag[0].startswith(QUANTITY_TAG)


def quantity_value(tag: object) -> Fraction:
    """The Fraction a quantity holds; ``no such overload`` for anything else."""
    if _is_quantity(tag):
        return _fraction(tag[0])  # type: ignore[index]
    raise CelFunctionError(NO_SUCH_OVERLOAD)


def _compare(a: object, b: object) -> int:
    """``Cmp`` of two quantities, on their (numerator, denominator) without building Fractions."""
    if not (_is_quantity(a) and _is_quantity(b)):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    an, ad = _ratio(a[0])  # type: ignore[index]
    bn, bd = _ratio(b[0])  # type: ignore[index]
    x, y = an * bd, bn * ad
    return (x > y) - (x < y)


@lru_cache(maxsize=4096)
def _ratio(tag: str) -> tuple[int, int]:
    num, _, den = tag[len(QUANTITY_TAG) :].partition("/")
    return int(num), int(den)


def quantity_form(tag: object) -> int:
    """The form (POSITIVE_SCALE, NEGATIVE_SCALE or DEC) a quantity's markers keep."""
    if not _is_quantity(tag):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    m1, m2 = tag[1], tag[2]  # type: ignore[index]
    return POSITIVE_SCALE if type(m1) is int else NEGATIVE_SCALE if type(m2) is int else DEC


_DECIMAL_SUFFIXES = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_MAX_INT64_FACTORS = 18


def parse_form(text: str) -> int:
    """The form apimachinery's ``ParseQuantity`` gives a quantity ``text`` (which parses): its int64Amount
    fast path (scale sign) or an inf.Dec."""
    if text == "0":
        return POSITIVE_SCALE
    body = text[1:] if text[:1] in "+-" else text
    body = body.lstrip("0")
    i = 0
    while i < len(body) and body[i] in _DIGITS:
        i += 1
    num, rest = body[:i] or "0", body[i:]
    denom = ""
    if rest.startswith("."):
        j = 1
        while j < len(rest) and rest[j] in _DIGITS:
            j += 1
        denom, rest = rest[1:j], rest[j:]
    if rest in _DECIMAL_SUFFIXES or rest[:1] in "eE":
        exponent = _DECIMAL_SUFFIXES[rest] if rest in _DECIMAL_SUFFIXES else int(rest[1:])
        if _MAX_INT64_FACTORS - len(num) - len(denom) < 0:
            return DEC
        scale = exponent - len(denom)
    else:
        exponent = _BINARY_SUFFIXES[rest]
        if denom or 15 - len(num) - int(exponent * 3 / 10) - 1 < 0:
            return DEC
        if int(num) << exponent > _INT64_MAX:
            return DEC
        scale = 0
    if scale < -9:
        return DEC
    return POSITIVE_SCALE if scale >= 0 else NEGATIVE_SCALE


@lru_cache(maxsize=4096)
def _fraction(tag: str) -> Fraction:
    num, _, den = tag[len(QUANTITY_TAG) :].partition("/")
    return Fraction(int(num), int(den))


def _parse_quantity(text: str) -> Fraction:
    try:
        return parse_quantity(text)
    except QuantityError as err:
        message = str(err)
        for known in (FORMAT_WRONG, SUFFIX_WRONG):
            if message.endswith(known):
                raise CelFunctionError(known) from None
        raise CelFunctionError(message) from None


def _string(arg: object) -> str:
    if not isinstance(arg, str) or arg.startswith(("\ue000q:", "\ue000v:")):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return arg


def q_quantity(arg: object) -> Quantity:
    return _quantity(_string(arg))


@lru_cache(maxsize=4096)
def _quantity(text: str) -> Quantity:
    return quantity_tag(_parse_quantity(text), parse_form(text))


def q_is_quantity(arg: object) -> bool:
    try:
        parse_quantity(_string(arg))
    except QuantityError:
        return False
    return True


def _cmp(a: Fraction, b: Fraction) -> int:
    return (a > b) - (a < b)


def q_sign(arg: object) -> int:
    return _cmp(quantity_value(arg), Fraction(0))


def q_is_greater_than(a: object, b: object) -> bool:
    return _compare(a, b) == 1


def q_is_less_than(a: object, b: object) -> bool:
    return _compare(a, b) == -1


def q_compare_to(a: object, b: object) -> int:
    return _compare(a, b)


def q_as_approximate_float(arg: object) -> float:
    value = quantity_value(arg)
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _as_int64(arg: object) -> int | None:
    """apimachinery's ``Quantity.AsInt64``: an inf.Dec or a negative scale is not an integer (whatever the value)."""
    value = quantity_value(arg)
    if quantity_form(arg) != POSITIVE_SCALE or value.denominator != 1:
        return None
    if not _INT64_MIN <= value.numerator <= _INT64_MAX:
        return None
    return value.numerator


def q_is_integer(arg: object) -> bool:
    return _as_int64(arg) is not None


def q_as_integer(arg: object) -> int:
    value = _as_int64(arg)
    if value is None:
        raise CelFunctionError("cannot convert value to integer")
    return value


def _add(a: object, b: object, negate: bool) -> Quantity:
    """Go's ``Quantity.Add``/``Sub`` on a copy: int64Amount arithmetic (the smaller scale; a zero operand
    takes the other's form) unless an operand is an inf.Dec or the int64 overflows, then an inf.Dec."""
    x = quantity_value(a)
    if isinstance(b, int) and not isinstance(b, bool):
        y, y_form = Fraction(b), POSITIVE_SCALE  # resource.NewQuantity(b, DecimalExponent)
    else:
        y, y_form = quantity_value(b), quantity_form(b)
    x_form = quantity_form(a)
    result = x - y if negate else x + y
    if DEC in (x_form, y_form):
        form = DEC
    elif y == 0:
        form = x_form
    elif x == 0:
        form = y_form
    else:
        form = max(x_form, y_form)
        # the sum at the smaller scale must fit an int64 (exact for scales >= 0 up to an intermediate
        # overflow of an operand above 2^63 that the other cancels, which Go turns into an inf.Dec)
        if form == POSITIVE_SCALE and not _INT64_MIN <= result <= _INT64_MAX:
            form = DEC
    return quantity_tag(result, form)


def q_add(a: object, b: object) -> Quantity:
    return _add(a, b, False)


def q_sub(a: object, b: object) -> Quantity:
    return _add(a, b, True)


# ---- semver ---------------------------------------------------------------------------------------

Version = tuple[int, int, int, tuple[int | str, ...]]


def _parse_uint(s: str) -> int:
    if not s:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    n = int(s)
    if n > _UINT64_MAX:
        raise SemverError(f"strconv.ParseUint: parsing {go_quote(s)}: value out of range")
    return n


def _number(s: str, what: str) -> int:
    if not set(s) <= _DIGITS:
        raise SemverError(f"Invalid character(s) found in {what.lower()} number {go_quote(s)}")
    if len(s) > 1 and s[0] == "0":
        raise SemverError(f"{what} number must not contain leading zeroes {go_quote(s)}")
    return _parse_uint(s)


def parse_semver(s: str) -> Version:
    """blang/semver/v4 ``Parse``: (major, minor, patch, pre-release identifiers); build metadata is checked, then dropped."""
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "Major")
    minor = _number(parts[1], "Minor")
    patch_str = parts[2]
    build: list[str] = []
    pre: list[str] = []
    if "+" in patch_str:
        patch_str, _, rest = patch_str.partition("+")
        build = rest.split(".")
    if "-" in patch_str:
        patch_str, _, rest = patch_str.partition("-")
        pre = rest.split(".")
    patch = _number(patch_str, "Patch")
    identifiers: list[int | str] = []
    for p in pre:
        if not p:
            raise SemverError("Prerelease is empty")
        if set(p) <= _DIGITS:
            if len(p) > 1 and p[0] == "0":
                raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {go_quote(p)}")
            identifiers.append(_parse_uint(p))
        elif set(p) <= _ALPHANUM:
            identifiers.append(p)
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {go_quote(p)}")
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not set(b) <= _ALPHANUM:
            raise SemverError(f"Invalid character(s) found in build meta data {go_quote(b)}")
    return (major, minor, patch, tuple(identifiers))


def normalize_and_parse_semver(s: str) -> Version:
    """semverlib.go ``normalizeAndParse``: no "v" prefix, no leading zeros, missing minor/patch filled with 0."""
    if s.startswith("v"):
        s = s[1:]
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _DIGITS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return parse_semver(".".join(parts))


def semver_tag(version: Version) -> str:
    major, minor, patch, pre = version
    text = f"{SEMVER_TAG}{major}.{minor}.{patch}"
    if pre:
        text += "-" + ".".join(str(p) for p in pre)
    return text


def semver_parts(tag: object) -> Version:
    """The version a semver tag holds; ``no such overload`` for anything else."""
    if not (isinstance(tag, str) and tag.startswith(SEMVER_TAG)):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    core, _, pre = tag[len(SEMVER_TAG) :].partition("-")
    major, minor, patch = core.split(".")
    identifiers = tuple(int(p) if p.isdigit() else p for p in pre.split(".")) if pre else ()
    return (int(major), int(minor), int(patch), identifiers)


def _pre_cmp(a: int | str, b: int | str) -> int:
    if isinstance(a, int) != isinstance(b, int):
        return -1 if isinstance(a, int) else 1
    return (a > b) - (a < b)  # type: ignore[operator]


def semver_compare(a: Version, b: Version) -> int:
    """blang's ``Version.Compare``."""
    if a[:3] != b[:3]:
        return -1 if a[:3] < b[:3] else 1
    pa, pb = a[3], b[3]
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb):
        c = _pre_cmp(x, y)
        if c:
            return c
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def _bool(arg: object) -> bool:
    if not isinstance(arg, bool):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return arg


def s_semver(arg: object, normalize: object = False) -> str:
    text = _string(arg)
    try:
        version = normalize_and_parse_semver(text) if _bool(normalize) else parse_semver(text)
    except SemverError as err:
        raise CelFunctionError(str(err)) from None
    return semver_tag(version)


def s_is_semver(arg: object, normalize: object = False) -> bool:
    text = _string(arg)
    try:
        normalize_and_parse_semver(text) if _bool(normalize) else parse_semver(text)
    except SemverError:
        return False
    return True


def s_major(arg: object) -> int:
    return semver_parts(arg)[0]


def s_minor(arg: object) -> int:
    return semver_parts(arg)[1]


def s_patch(arg: object) -> int:
    return semver_parts(arg)[2]


def s_is_greater_than(a: object, b: object) -> bool:
    return semver_compare(semver_parts(a), semver_parts(b)) == 1


def s_is_less_than(a: object, b: object) -> bool:
    return semver_compare(semver_parts(a), semver_parts(b)) == -1


def s_compare_to(a: object, b: object) -> int:
    return semver_compare(semver_parts(a), semver_parts(b))


# ---- the overload tables (name, overload id, member?, parameter kinds, result kind, impl) --------------
# Kinds: "Q" quantity, "S" semver, "string", "int", "bool", "double". cel.py turns them into declarations.

QUANTITY_FUNCTIONS = [
    ("quantity", "string_to_quantity", False, ("string",), "Q", q_quantity),
    ("isQuantity", "is_quantity_string", False, ("string",), "bool", q_is_quantity),
    ("sign", "quantity_sign", False, ("Q",), "int", q_sign),
    ("isGreaterThan", "quantity_is_greater_than", True, ("Q", "Q"), "bool", q_is_greater_than),
    ("isLessThan", "quantity_is_less_than", True, ("Q", "Q"), "bool", q_is_less_than),
    ("compareTo", "quantity_compare_to", True, ("Q", "Q"), "int", q_compare_to),
    ("asApproximateFloat", "quantity_get_float", True, ("Q",), "double", q_as_approximate_float),
    ("asInteger", "quantity_get_int", True, ("Q",), "int", q_as_integer),
    ("isInteger", "quantity_is_integer", True, ("Q",), "bool", q_is_integer),
    ("add", "quantity_add", True, ("Q", "Q"), "Q", q_add),
    ("add", "quantity_add_int", True, ("Q", "int"), "Q", q_add),
    ("sub", "quantity_sub", True, ("Q", "Q"), "Q", q_sub),
    ("sub", "quantity_sub_int", True, ("Q", "int"), "Q", q_sub),
]

SEMVER_FUNCTIONS = [
    ("semver", "string_to_semver", False, ("string",), "S", s_semver),
    ("semver", "string_bool_to_semver", False, ("string", "bool"), "S", s_semver),
    ("isSemver", "is_semver_string", False, ("string",), "bool", s_is_semver),
    ("isSemver", "is_semver_string_bool", False, ("string", "bool"), "bool", s_is_semver),
    ("isGreaterThan", "semver_is_greater_than", True, ("S", "S"), "bool", s_is_greater_than),
    ("isLessThan", "semver_is_less_than", True, ("S", "S"), "bool", s_is_less_than),
    ("compareTo", "semver_compare_to", True, ("S", "S"), "int", s_compare_to),
    ("major", "semver_major", True, ("S",), "int", s_major),
    ("minor", "semver_minor", True, ("S",), "int", s_minor),
    ("patch", "semver_patch", True, ("S",), "int", s_patch),
]
