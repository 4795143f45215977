"""Words for a user's mistake: the candidate a misspelt name was meant to be (``did you mean``)
and the kind of a value that has the wrong type (``expected a string, got a mapping``)."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["suggest", "type_name"]


def suggest(name: str, candidates: Collection[str], cutoff: float = 0.6) -> str | None:
    """The candidate closest to ``name`` (for "did you mean"), or None when nothing is close
    (difflib's ratio at least ``cutoff``; a candidate differing only in case always is)."""
    pool = [c for c in candidates if c != name]
    if not pool or len(name) > 4 * max(map(len, pool)):  # far too long to be close to any
        return None
    lowered = {c.lower(): c for c in pool}
    if name.lower() in lowered:
        return lowered[name.lower()]
    matches = difflib.get_close_matches(name, pool, n=1, cutoff=cutoff)
    if matches:
        return matches[0]
    matches = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[matches[0]] if matches else None


def type_name(value: Any) -> str:
    """What kind of value ``value`` is, in words: "a mapping", "a list", "a string", "a boolean",
    "an integer", "a number", "null", "binary data", "a set" (else "a <Python type>")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, (bytes, bytearray)):
        return "binary data"
    if isinstance(value, (set, frozenset)):
        return "a set"
    return f"a {type(value).__name__}"
