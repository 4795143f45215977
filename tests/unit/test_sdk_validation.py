"""``kubesched.sdk.validation``: apimachinery v0.36.3's exact messages
(``k8s.io/apimachinery@v0.36.3/pkg/api/validate/content``: kube.go IsLabelKey / IsLabelValue,
dns.go IsDNS1123Subdomain, errors.go MaxLenError "must be no more than N bytes", EmptyError,
RegexError). v0.34 said "characters" and "a qualified name"; Go 1.36's
validation_pluginargs_test.go expects the new text."""

from __future__ import annotations

import pytest

from kubesched.sdk.validation import (
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)

KEY_RE = "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'"
KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    f"character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is {KEY_RE})"
)
SUBDOMAIN_RE = "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'"
SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    f"start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is {SUBDOMAIN_RE})"
)


@pytest.mark.parametrize(
    ("key", "want"),
    [
        ("example.com/MyName", []),
        ("a" * 63, []),
        ("a" * 64, ["name part must be no more than 63 bytes"]),
        ("é" * 32, ["name part must be no more than 63 bytes", "name part " + KEY_MSG]),  # 64 bytes, 32 characters
        ("example.com/", ["name part must be non-empty", "name part " + KEY_MSG]),
        ("/name", ["prefix part must be non-empty"]),
        ("a" * 254 + "/x", ["prefix part must be no more than 253 bytes"]),
        ("Example.com/x", ["prefix part " + SUBDOMAIN_MSG]),
        (
            "example.com/aaa/bbb",
            ["a valid label key " + KEY_MSG + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"],
        ),
    ],
)
def test_label_key_messages(key: str, want: list[str]) -> None:
    assert qualified_name_errors(key) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        ("", []),
        ("my_value", []),
        ("a" * 64, ["must be no more than 63 bytes"]),
        (
            "-x",
            [
                "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                f"regex used for validation is '({KEY_RE[1:-1]})?')"
            ],
        ),
    ],
)
def test_label_value_messages(value: str, want: list[str]) -> None:
    assert label_value_errors(value) == want


def test_dns1123_subdomain_messages() -> None:
    assert dns1123_subdomain_errors("example.com") == []
    assert dns1123_subdomain_errors("a" * 254) == ["must be no more than 253 bytes"]
    assert dns1123_subdomain_errors("Example.com") == [SUBDOMAIN_MSG]
