"""Kubernetes label key, label value and DNS subdomain validation with apimachinery v0.36.3's
exact messages (``k8s.io/apimachinery/pkg/api/validate/content``: ``IsLabelKey``,
``IsLabelValue``, ``IsDNS1123Subdomain``, ``MaxLenError``, ``RegexError``; ``util/validation``'s
``IsQualifiedName`` and ``IsValidLabelValue`` are aliases of the first two, and
``labels.NewRequirement`` and ``metav1validation.ValidateLabelName`` call them): for plugins that
validate args or selectors the way kube-scheduler does. Each function returns the list of
problems; empty means valid. Lengths are in bytes, as Go's ``len``, and the messages say so
("must be no more than 63 bytes"; apimachinery v0.34 said "characters" and "a qualified name")."""

from __future__ import annotations

import re

__all__ = [
    "dns1123_subdomain_errors",
    "label_value_errors",
    "max_len_error",
    "qualified_name_errors",
    "regex_error",
]

_QNAME_CHAR = "[A-Za-z0-9]"
_QNAME_EXT_CHAR = "[-A-Za-z0-9_.]"
QUALIFIED_NAME_FMT = "(" + _QNAME_CHAR + _QNAME_EXT_CHAR + "*)?" + _QNAME_CHAR
_QUALIFIED_NAME_ERR = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character"
)
_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT)

LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_ERR = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT)

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """content.RegexError."""
    if not examples:
        return msg + " (regex used for validation is '" + fmt + "')"
    msg += " (e.g. "
    for i, ex in enumerate(examples):
        if i > 0:
            msg += " or "
        msg += "'" + ex + "', "
    return msg + "regex used for validation is '" + fmt + "')"


def max_len_error(n: int) -> str:
    """content.MaxLenError."""
    return f"must be no more than {n} bytes"


def dns1123_subdomain_errors(value: str) -> list[str]:
    """content.IsDNS1123Subdomain (the label key's prefix check)."""
    errs = []
    if len(value.encode()) > 253:
        errs.append(max_len_error(253))
    if not _DNS1123_SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_ERR, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """content.IsLabelKey (``validation.IsQualifiedName``): ``[prefix/]name`` (label keys,
    resource names)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix))
    else:
        return [
            "a valid label key "
            + regex_error(_QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name.encode()) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part " + regex_error(_QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """content.IsLabelValue (``validation.IsValidLabelValue``)."""
    errs: list[str] = []
    if len(value.encode()) > 63:
        errs.append(max_len_error(63))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_ERR, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
