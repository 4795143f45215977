"""The rest of the apiserver's base CEL environment (apiserver@v0.36.3 pkg/cel/environment/base.go) for DRA selectors.

cel-go libraries the C++ runtime ships are switched on by :data:`EXTENSIONS_CONFIG` with the versions
the 1.36 base environment uses: ``sets``, ``lists`` (cel-go's version 3 only adds cost estimates to
version 2), ``two-var-comprehensions`` and ``optional``. Kubernetes' lists and regex libraries are written
here (pkg/cel/library lists.go, regex.go) as the overload rows of :mod:`.celtypes`:
``(name, overload id, member?, parameter types, result type, impl)`` where a type is a cel type
signature (``"list(int)"``) or one of the opaque kinds ``"IP"``, ``"CIDR"``, ``"URL"``.

IP and CIDR (ip.go, cidr.go) are :mod:`.celnet`'s rows and URL (urls.go) :mod:`.celurl`'s, declared beside
quantity's by :mod:`.cel` (the checker collides abstract types declared inside an extension). As for quantities and versions, the runtime takes no
opaque values: an IP is the list
``["\\ue000ip", "<canonical address>"]``, a CIDR ``["\\ue000cidr", "<address>", <bits>]`` (lists, so
that ``string(ip)`` can be an overload of ``string`` apart from ``string(string)``; CEL's ``==`` on them
is Go's ``Equal``) and a URL the tagged string ``"\\ue000u:<URL.String()>"``. :mod:`.cel` declares the rows
with these types where it type-checks and with the runtime shapes where it evaluates.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import lru_cache
from itertools import pairwise
from typing import Any

from .celtypes import NO_SUCH_OVERLOAD, CelFunctionError

__all__ = ["EXTENSIONS_CONFIG", "LIBRARY_FUNCTIONS", "OPAQUE_TYPES"]

EXTENSIONS_CONFIG = """\
extensions:
  - name: sets
  - name: lists
    version: 2
  - name: two-var-comprehensions
  - name: optional
"""

#: the opaque kinds: their cel-go type names, and the runtime shape they take (a cel type signature)
OPAQUE_TYPES = {"IP": ("net.IP", "list(dyn)"), "CIDR": ("net.CIDR", "list(dyn)"), "URL": ("kubernetes.URL", "string")}

_TAG = "\ue000"
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


# ---- lists (library.Lists) ---------------------------------------------------------------------------


def _comparable(v: object) -> bool:
    if isinstance(v, str):
        return not v.startswith(_TAG)
    return isinstance(v, (bool, int, float, bytes, bytearray, timedelta, datetime))


def _compare(a: object, b: object) -> int | None:
    """cel-go's ``Compare`` of two comparable values; None where Go gives an error value (different types)."""
    if isinstance(a, bool) or isinstance(b, bool):
        if not (isinstance(a, bool) and isinstance(b, bool)):
            return None
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        pass
    elif isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)):
        pass
    elif type(a) is not type(b):
        return None
    return (a > b) - (a < b)  # type: ignore[operator]


def _value(name: str, v: Any) -> Any:
    # The runtime returns no duration or timestamp from a function declared to return any type.
    if isinstance(v, (timedelta, datetime)):
        raise CelFunctionError(f"{name} of durations or timestamps is not supported by kubesched's CEL runtime")
    return v


def _elements(arg: object) -> list[Any]:
    if not isinstance(arg, list):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    for v in arg:
        if not _comparable(v):
            raise CelFunctionError(NO_SUCH_OVERLOAD)
    return arg


def l_is_sorted(arg: object) -> bool:
    items = _elements(arg)
    return all(_compare(a, b) != 1 for a, b in pairwise(items))


def _extreme(name: str, prefer: int) -> Any:
    def impl(arg: object) -> Any:
        items = _elements(arg)
        if not items:
            raise CelFunctionError(f"{name} called on empty list")
        result = items[0]
        for v in items[1:]:
            if _compare(result, v) == prefer:
                result = v
        return _value(name, result)

    return impl


l_min = _extreme("min", 1)
l_max = _extreme("max", -1)


def l_sum(arg: object) -> Any:
    if not isinstance(arg, list):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    if not arg:
        return 0
    kind = type(arg[0])
    if kind not in (int, float, timedelta):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    total = arg[0]
    for v in arg[1:]:
        if type(v) is not kind:
            raise CelFunctionError(NO_SUCH_OVERLOAD)
        total = total + v
        if kind is int and not _INT64_MIN <= total <= _INT64_MAX:
            raise CelFunctionError("integer overflow")
    return _value("sum", total)


def _equal(a: object, b: object) -> bool:
    """cel-go's ``Equal`` (heterogeneous: numbers compare by value, other types never equal each other)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and _equal(v, b[k]) for k, v in a.items())
    if isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)):
        return a == b
    return type(a) is type(b) and a == b


def l_index_of(arg: object, item: object) -> int:
    if not isinstance(arg, list):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    for i, v in enumerate(arg):
        if _equal(v, item):
            return i
    return -1


def l_last_index_of(arg: object, item: object) -> int:
    if not isinstance(arg, list):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    for i in range(len(arg) - 1, -1, -1):
        if _equal(arg[i], item):
            return i
    return -1


_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_SUMMABLE = ("int", "uint", "double", "duration")

LISTS_FUNCTIONS = [
    *(("isSorted", f"list_{t}_is_sorted_bool", True, (f"list({t})",), "bool", l_is_sorted) for t in _COMPARABLE),
    *(("sum", f"list_{t}_sum_{t}", True, (f"list({t})",), t, l_sum) for t in _SUMMABLE),
    *(("max", f"list_{t}_max_{t}", True, (f"list({t})",), t, l_max) for t in _COMPARABLE),
    *(("min", f"list_{t}_min_{t}", True, (f"list({t})",), t, l_min) for t in _COMPARABLE),
    # Go declares list(A).indexOf(A); the runtime's Python declarations take no type parameter, so an
    # element of another type than the list's compiles here (and finds nothing) where Go rejects it.
    ("indexOf", "list_a_index_of_int", True, ("list(dyn)", "dyn"), "int", l_index_of),
    ("lastIndexOf", "list_a_last_index_of_int", True, ("list(dyn)", "dyn"), "int", l_last_index_of),
]


# ---- regex (library.Regex) ----------------------------------------------------------------------------


def _go_regex_error(pattern: str, err: re.error) -> str:
    """Go's regexp/syntax error text for the errors both parsers report; Python's text otherwise."""
    msg, pos = err.msg, err.pos if err.pos is not None else 0
    if msg == "unbalanced parenthesis":
        why = f"unexpected ): `{pattern}`"
    elif msg.startswith("missing ), unterminated subpattern"):
        why = f"missing closing ): `{pattern}`"
    elif msg == "unterminated character set":
        why = f"missing closing ]: `{pattern[pos:]}`"
    elif msg == "nothing to repeat":
        why = f"missing argument to repetition operator: `{pattern[pos:pos + 1]}`"
    elif msg == "multiple repeat":
        why = f"invalid nested repetition operator: `{pattern[pos - 1:pos + 1]}`"
    else:
        why = msg
    return f"Illegal regex: error parsing regexp: {why}"


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str] | str:
    try:
        return re.compile(pattern)
    except re.error as err:
        return _go_regex_error(pattern, err)


def _compiled(pattern: object) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    rx = _regex(pattern)
    if isinstance(rx, str):
        raise CelFunctionError(rx)
    return rx


def _text(arg: object) -> str:
    if not isinstance(arg, str) or arg.startswith(_TAG):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return arg


def r_find(arg: object, pattern: object) -> str:
    text = _text(arg)
    m = _compiled(pattern).search(text)
    return m.group(0) if m else ""


def r_find_all(arg: object, pattern: object, limit: object = -1) -> list[str]:
    text = _text(arg)
    rx = _compiled(pattern)
    if not isinstance(limit, int) or isinstance(limit, bool):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    out: list[str] = []
    if limit == 0:
        return out
    prev_end = -1
    for m in rx.finditer(text):
        if m.start() == m.end() == prev_end:  # Go: an empty match right after the previous match is skipped
            continue
        out.append(m.group(0))
        prev_end = m.end()
        if len(out) == limit:
            break
    return out


REGEX_FUNCTIONS = [
    ("find", "string_find_string", True, ("string", "string"), "string", r_find),
    ("findAll", "string_find_all_string", True, ("string", "string"), "list(string)", r_find_all),
    ("findAll", "string_find_all_string_int", True, ("string", "string", "int"), "list(string)", r_find_all),
]

LIBRARY_FUNCTIONS = LISTS_FUNCTIONS + REGEX_FUNCTIONS
