"""Go ``time.Duration`` parsing (``time.ParseDuration``); formatting is ``kubesched.runtime.timefmt``.

metav1.Duration fields (leaseDuration, renewDeadline, retryPeriod) are JSON strings parsed
with ``time.ParseDuration``: ``"15s"``, ``"1m30s"``, ``"500ms"``, ``"1.5h"``, ``"-2s"``, ``"0"``.
"""

from __future__ import annotations

import re
from fractions import Fraction

__all__ = ["parse_go_duration"]

_UNITS_NS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 MICRO SIGN
    "\u03bcs": 1_000,  # U+03BC GREEK SMALL LETTER MU
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_MAX_NS = 2**63 - 1


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string; ValueError with Go's message when it is not one."""
    original = text
    quoted = _quote(original)
    sign = 1
    if text[:1] in ("-", "+"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ValueError(f"time: invalid duration {quoted}")
    total = Fraction(0)
    while text:
        # the next value: digits, optionally "." and more digits (Go's leadingInt/leadingFraction)
        number = re.match(r"(\d*)(?:\.(\d*))?", text)
        assert number is not None  # the pattern matches the empty string
        whole, frac = number.group(1), number.group(2)
        if not whole and not frac:  # no digits at all, e.g. ".s" or "s"
            raise ValueError(f"time: invalid duration {quoted}")
        text = text[number.end() :]
        # the unit: everything up to the next digit or "."
        unit_match = re.match(r"[^\d.]*", text)
        unit = unit_match.group(0) if unit_match else ""
        if not unit:
            raise ValueError(f"time: missing unit in duration {quoted}")
        if unit not in _UNITS_NS:
            raise ValueError(f"time: unknown unit {_quote(unit)} in duration {quoted}")
        text = text[len(unit) :]
        value = Fraction(int(whole or "0"))
        if frac:
            value += Fraction(int(frac), 10 ** len(frac))
        total += value * _UNITS_NS[unit]
    if total > _MAX_NS:
        raise ValueError(f"time: invalid duration {quoted}")
    return sign * float(total) / 1e9


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
