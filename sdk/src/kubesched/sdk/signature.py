"""Helpers for :func:`~kubesched.sdk.hookspecs.sign_pod`: turn the parts of a pod a plugin
reads into a hashable value."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

__all__ = ["freeze"]


def freeze(value: Any) -> Hashable:
    """A hashable, order-insensitive-for-mappings copy of an API value: mappings become sorted
    tuples of pairs, lists become tuples, scalars stay. ``freeze(a) == freeze(b)`` exactly when
    the JSON values are equal."""
    if isinstance(value, Mapping):
        return ("{}", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Hashable):
        return value
    raise TypeError(f"freeze: unsupported value of type {type(value).__name__}")
