"""The one home of time formatting: RFC 3339 and Go durations."""

from __future__ import annotations

import pytest

from kubesched.runtime.config._duration import parse_go_duration
from kubesched.runtime.timefmt import go_duration, rfc3339


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (1e-10, "0s"),  # below a nanosecond: Go's integer Duration is 0
        (1e-9, "1ns"),
        (1.5e-6, "1.5µs"),
        (0.5, "500ms"),
        (10, "10s"),
        (90, "1m30s"),
        (900, "15m0s"),
        (3600, "1h0m0s"),
        (-2, "-2s"),
    ],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


def test_config_parses_what_go_duration_formats() -> None:
    assert parse_go_duration(go_duration(5400.25)) == 5400.25


def test_rfc3339_of_a_given_time() -> None:
    assert rfc3339(0) == "1970-01-01T00:00:00Z"
    assert rfc3339(1_700_000_000.25, micro=True) == "2023-11-14T22:13:20.250000Z"
    # a given time does not disturb the cache of "now"
    assert rfc3339().startswith("20")
