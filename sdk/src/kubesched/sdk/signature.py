"""Helpers for :func:`~kubesched.sdk.hookspecs.sign_pod`: turn the parts of a pod a plugin
reads into a hashable value."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from typing import Any

__all__ = ["freeze"]

_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), check_circular=False, default=lambda o: _default(o)).encode


def _default(o: Any) -> Any:
    if isinstance(o, Mapping):
        return dict(o)
    raise TypeError(f"freeze: unsupported value of type {type(o).__name__}")


def freeze(value: Any) -> Hashable:
    """A hashable copy of an API value (JSON-like: mappings, lists, tuples, strings, numbers,
    booleans, None): its canonical JSON text, keys sorted. ``freeze(a) == freeze(b)`` when
    the values are equal as JSON (mapping order does not matter, list order does); ``1`` and
    ``1.0`` freeze differently, which only costs a reuse, never a wrong one."""
    return _dumps(value)
