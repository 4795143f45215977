"""Time formatting, in one place: RFC 3339 timestamps as the API writes them, and Go's
``time.Duration.String()`` as kube-scheduler's messages print durations."""

from __future__ import annotations

import time

__all__ = ["go_duration", "rfc3339"]

_second_cache: tuple[int, str] = (-1, "")
#: the same for a given ``t`` (the simulator's virtual clock: many pods per second)
_given_cache: tuple[int, str] = (-1, "")


def rfc3339(t: float | None = None, *, micro: bool = False) -> str:
    """``t`` (seconds since the epoch; now when None) in RFC 3339, UTC: ``2026-11-24T01:02:03Z``,
    or with microseconds (``...03.000123Z``, the API's MicroTime) when ``micro``. The seconds
    part of "now" is formatted once per second (event writes call this per pod)."""
    global _second_cache, _given_cache
    now = time.time() if t is None else t
    sec = int(now // 1)
    cached = _second_cache if t is None else _given_cache
    if cached[0] != sec:
        cached = (sec, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)))
        if t is None:
            _second_cache = cached
        else:
            _given_cache = cached
    if micro:
        return f"{cached[1]}.{min(int((now - sec) * 1e6), 999_999):06d}Z"
    return cached[1] + "Z"


def go_duration(seconds: float) -> str:
    """Go's ``Duration.String()`` for a number of seconds (90 -> ``"1m30s"``, 0.5 -> ``"500ms"``;
    below one nanosecond -> ``"0s"``, as Go's integer nanoseconds)."""
    ns = round(seconds * 1_000_000_000)
    if ns == 0:
        return "0s"
    negative = ns < 0
    value = abs(ns)
    if value < 1_000_000_000:
        if value < 1_000:
            text = f"{value}ns"
        elif value < 1_000_000:
            text = _with_fraction(value, 1_000) + "\u00b5s"
        else:
            text = _with_fraction(value, 1_000_000) + "ms"
    else:
        hours, rest = divmod(value, 3600 * 1_000_000_000)
        minutes, rest = divmod(rest, 60 * 1_000_000_000)
        secs = _with_fraction(rest, 1_000_000_000) + "s"
        if hours:
            text = f"{hours}h{minutes}m{secs}"
        elif minutes:
            text = f"{minutes}m{secs}"
        else:
            text = secs
    return "-" + text if negative else text


def _with_fraction(value: int, unit: int) -> str:
    whole, frac = divmod(value, unit)
    if not frac:
        return str(whole)
    digits = str(frac).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"
