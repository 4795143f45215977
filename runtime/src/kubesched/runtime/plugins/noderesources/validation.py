"""The bits of ``k8s.io/apimachinery`` validation the args need, with its exact messages.

``qualified_name_errors`` is ``validation.IsQualifiedName`` as of apimachinery v0.34 (the label
key check behind ``metav1validation.ValidateLabelName``); the ``*_error`` helpers render a
``field.Error`` the way its ``Error()`` method does (``<path>: <Type>: <value>: <detail>``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

__all__ = [
    "duplicate_error",
    "invalid_error",
    "not_supported_error",
    "qualified_name_errors",
    "required_error",
]

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
_QUALIFIED_NAME_FMT = "(" + _QNAME_CHAR + _QNAME_EXT_CHAR + "*)?" + _QNAME_CHAR
_QUALIFIED_NAME_ERR_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_QUALIFIED_NAME_MAX_LENGTH = 63
_QUALIFIED_NAME_RE = re.compile(_QUALIFIED_NAME_FMT)

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MAX_LENGTH = 253
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError."""
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += "'" + ex + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def _dns1123_subdomain_errors(value: str) -> list[str]:
    errs = []
    if len(value) > _DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len_error(_DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(_regex_error(_DNS1123_SUBDOMAIN_ERR_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """validation.IsQualifiedName: ``[prefix/]name``; an empty list when valid."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in _dns1123_subdomain_errors(prefix))
    else:
        return [
            "a qualified name "
            + _regex_error(
                _QUALIFIED_NAME_ERR_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
            )
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > _QUALIFIED_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(_QUALIFIED_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append(
            "name part "
            + _regex_error(
                _QUALIFIED_NAME_ERR_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"
            )
        )
    return errs


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
