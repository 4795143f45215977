"""Quantities against the forms documented for Kubernetes' resource.Quantity:

<quantity> ::= <signedNumber><suffix>
<suffix>   ::= <binarySI> | <decimalExponent> | <decimalSI>
<binarySI> ::= Ki | Mi | Gi | Ti | Pi | Ei
<decimalSI> ::= m | "" | k | M | G | T | P | E   (and n, u)
<decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.sdk import QuantityError, milli_value, parse_quantity, value

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
SUFFIXES = {**{k: Fraction(v) for k, v in BINARY.items()}, **DECIMAL}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("100m", Fraction(1, 10)),
        ("1Gi", Fraction(2**30)),
        ("1e3", Fraction(1000)),
        ("0.5", Fraction(1, 2)),
        ("1.5Ki", Fraction(1536)),
        ("+1", Fraction(1)),
        ("-1", Fraction(-1)),
        ("1E-3", Fraction(1, 1000)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("1E3", Fraction(1000)),
        ("1E", Fraction(10**18)),
        ("2e+2", Fraction(200)),
        ("0", Fraction(0)),
        ("0.1", Fraction(1, 10)),
        ("123456789012345678901234567890", Fraction(123456789012345678901234567890)),
        ("1.25M", Fraction(1_250_000)),
        ("500u", Fraction(1, 2000)),
        ("3n", Fraction(3, 10**9)),
        ("-1.5Gi", Fraction(-3 * 2**29)),
    ],
)
def test_documented_forms(text, expected):
    assert parse_quantity(text) == expected


def test_exact_arithmetic():
    assert parse_quantity("0.1") + parse_quantity("0.2") == parse_quantity("0.3")
    assert parse_quantity("100m") * 3 == parse_quantity("300m")


def test_yaml_numbers():
    assert parse_quantity(2) == 2
    assert parse_quantity(0.5) == Fraction(1, 2)
    assert parse_quantity(0.1) == Fraction(1, 10)
    with pytest.raises(QuantityError):
        parse_quantity(True)
    with pytest.raises(QuantityError):
        parse_quantity(None)  # type: ignore[arg-type]


@given(
    n=st.integers(min_value=0, max_value=10**15),
    suffix=st.sampled_from(sorted(SUFFIXES)),
    sign=st.sampled_from(["", "+", "-"]),
)
def test_integer_with_suffix_is_exact(n, suffix, sign):
    expected = n * SUFFIXES[suffix]
    if suffix in BINARY:
        expected = min(expected, Fraction(2**63 - 1))  # Go caps a BinarySI value at max int64
    assert parse_quantity(f"{sign}{n}{suffix}") == (-expected if sign == "-" else expected)


@given(
    whole=st.integers(min_value=0, max_value=10**9),
    frac=st.text(alphabet="0123456789", min_size=1, max_size=9),
    suffix=st.sampled_from(sorted(SUFFIXES)),
)
def test_decimal_with_suffix_is_exact(whole, frac, suffix):
    number = Fraction(whole) + Fraction(int(frac), 10 ** len(frac))
    expected = number * SUFFIXES[suffix]
    if suffix in BINARY:
        expected = min(expected, Fraction(2**63 - 1))  # Go caps a BinarySI value at max int64
    assert parse_quantity(f"{whole}.{frac}{suffix}") == expected


@given(
    n=st.integers(min_value=0, max_value=10**9),
    exp=st.integers(min_value=-30, max_value=30),
    e=st.sampled_from(["e", "E"]),
)
def test_decimal_exponent_is_exact(n, exp, e):
    assert parse_quantity(f"{n}{e}{exp}") == n * Fraction(10) ** exp


@given(n=st.integers(min_value=0, max_value=10**12), suffix=st.sampled_from(sorted(SUFFIXES)))
def test_milli_value_rounds_up(n, suffix):
    q = f"{n}{suffix}"
    exact = parse_quantity(q) * 1000
    mv = milli_value(q)
    if math.ceil(exact) > 2**63 - 1:
        assert mv == 2**63 - 1  # saturated at max int64
        return
    assert mv == math.ceil(exact)
    assert mv >= exact > mv - 1


@pytest.mark.parametrize(
    ("text", "milli", "whole"),
    [
        ("1m", 1, 1),
        ("0.5m", 1, 1),
        ("1u", 1, 1),
        ("1500u", 2, 1),
        ("100m", 100, 1),
        ("1", 1000, 1),
        ("1.5", 1500, 2),
        ("1Ki", 1024000, 1024),
        ("0", 0, 0),
    ],
)
def test_milli_value_and_value(text, milli, whole):
    assert milli_value(text) == milli
    assert value(text) == whole


@pytest.mark.parametrize(
    "text",
    [
        "12x",
        "",
        "1.2.3",
        "1 Gi",
        "1e",
        "1Kii",
        "1ki",
        "--1",
        "1.5.Gi",
        "Gi1",
        "1e3.5",
        "0x10",
        "1,5",
        "1K",
        "abc",
    ],
)
def test_invalid_strings_raise(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("text", ["Ki", ".", "+", "-", "e3"])
def test_what_go_reads_as_zero(text):
    # apimachinery's parseQuantityString reads a missing number as 0 (ParseQuantity("+") is 0)
    assert parse_quantity(text) == 0


def test_quantity_error_is_a_value_error_and_names_the_input():
    with pytest.raises(ValueError) as ei:
        parse_quantity("12x")
    assert "12x" in str(ei.value)


@given(st.text(alphabet="0123456789.+-eEKkMGTPinumx ", max_size=8))
def test_parse_never_crashes_with_other_errors(text):
    try:
        parse_quantity(text)
    except QuantityError:
        pass
