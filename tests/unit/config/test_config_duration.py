"""Go duration parsing/formatting (time.ParseDuration / Duration.String) used for metav1.Duration."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.runtime.config._duration import parse_go_duration
from kubesched.runtime.timefmt import go_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("15s", 15.0),
        ("1m30s", 90.0),
        ("500ms", 0.5),
        ("1.5h", 5400.0),
        ("-2s", -2.0),
        ("+3s", 3.0),
        ("0", 0.0),
        ("0s", 0.0),
        (".5s", 0.5),
        ("1.s", 1.0),
        ("2h45m", 9900.0),
        ("300us", 0.0003),
        ("300\u00b5s", 0.0003),
        ("300\u03bcs", 0.0003),
        ("10ns", 1e-8),
    ],
)
def test_parse(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("s", 'time: invalid duration "s"'),
        ("15", 'time: missing unit in duration "15"'),
        ("1h2", 'time: missing unit in duration "1h2"'),
        ("2sec", 'time: unknown unit "sec" in duration "2sec"'),
        ("3 s", 'time: unknown unit " s" in duration "3 s"'),
        ("9999999999h", 'time: invalid duration "9999999999h"'),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_go_duration(text)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (15, "15s"),
        (90, "1m30s"),
        (3600, "1h0m0s"),
        (0.5, "500ms"),
        (1.5, "1.5s"),
        (-1, "-1s"),
        (0.0000015, "1.5\u00b5s"),
        (0.000000001, "1ns"),
    ],
)
def test_format(seconds: float, text: str) -> None:
    assert go_duration(seconds) == text


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_format_then_parse_round_trips(nanoseconds: int) -> None:
    seconds = nanoseconds / 1e9
    assert round(parse_go_duration(go_duration(seconds)) * 1e9) == nanoseconds
