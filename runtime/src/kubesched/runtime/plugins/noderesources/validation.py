"""The bits of ``k8s.io/apimachinery`` validation the args need, with its exact messages.

``qualified_name_errors`` is ``validation.IsQualifiedName`` as of apimachinery v0.34 (the label
key check behind ``metav1validation.ValidateLabelName``); the ``*_error`` helpers render a
``field.Error`` the way its ``Error()`` method does (``<path>: <Type>: <value>: <detail>``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kubesched.sdk.validation import qualified_name_errors

__all__ = [
    "duplicate_error",
    "forbidden_error",
    "invalid_error",
    "not_supported_error",
    "qualified_name_errors",
    "required_error",
]


def _value(v: object) -> str:
    """field.Error's rendering of a bad value: numbers as they are, strings quoted."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v, default=str)


def invalid_error(path: str, value: object, detail: str) -> str:
    return f"{path}: Invalid value: {_value(value)}: {detail}"


def not_supported_error(path: str, value: object, supported: Sequence[str]) -> str:
    return f"{path}: Unsupported value: {_value(value)}: supported values: " + ", ".join(
        json.dumps(s) for s in supported
    )


def required_error(path: str, detail: str) -> str:
    return f"{path}: Required value: {detail}"


def duplicate_error(path: str, value: object) -> str:
    return f"{path}: Duplicate value: {_value(value)}"


def forbidden_error(path: str, detail: str) -> str:
    return f"{path}: Forbidden: {detail}"
