"""Kubernetes' CEL quantity and semver libraries (apiserver@v0.36.3 pkg/cel/library), the ``device`` variable,
Go's error texts, the compile cache and the per-device memo of kubesched.runtime.dra.cel."""

from __future__ import annotations

import copy

import cel_support
import pytest

from kubesched.runtime.dra import celtypes
from kubesched.runtime.dra.cel import Cache, CelError, compile_expression

DRV = cel_support.DRV
DEVICE = {
    "name": "gpu-0",
    "attributes": {
        "s": {"string": "fish"},
        "i": {"int": 7},
        "b": {"bool": True},
        "v": {"version": "1.2.3"},
        "other.example.com/model": {"string": "a100"},
    },
    "capacity": {"memory": {"value": "1Gi"}, "other.example.com/cores": {"value": "108"}},
}


def matches(expression: str, device: dict[str, object] = DEVICE, driver: str = DRV) -> bool:
    return cel_support.matches(expression, device, driver)


def runtime_error(expression: str, device: dict[str, object] = DEVICE) -> str:
    return cel_support.runtime_error(expression, device)


TRUE = [
    'quantity("1Gi").compareTo(quantity("1024Mi")) == 0',
    'quantity("1Gi") == quantity("1024Mi")',
    'quantity("1Ki").compareTo(quantity("1Mi")) == -1 && quantity("1Mi").compareTo(quantity("1Ki")) == 1',
    'quantity("1Ki").isLessThan(quantity("1Mi")) && !quantity("1Ki").isGreaterThan(quantity("1Mi"))',
    'isQuantity("1Gi") && !isQuantity("1x") && !isQuantity("")',
    'sign(quantity("-1")) == -1 && sign(quantity("0")) == 0 && sign(quantity("1m")) == 1',
    'quantity("1.5").asApproximateFloat() == 1.5',
    '!quantity("1000m").isInteger() && !quantity("1.5").isInteger() && quantity("1k").asInteger() == 1000',
    '!quantity("1e20").isInteger()',
    'quantity("1Mi").add(quantity("1Mi")) == quantity("2Mi") && quantity("1").add(2) == quantity("3")',
    'quantity("1Mi").sub(quantity("1Ki")) == quantity("1023Ki") && quantity("1").sub(2) == quantity("-1")',
    'semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
    'isSemver("1.2.3") && !isSemver("1.2") && isSemver("v1.2", true) && !isSemver("v1.2", false)',
    'semver("v01.02.03", true) == semver("1.2.3")',
    'semver("1.0.0-alpha").isLessThan(semver("1.0.0")) && semver("1.0.0").isGreaterThan(semver("1.0.0-alpha"))',
    'semver("1.0.0-1").compareTo(semver("1.0.0-alpha")) == -1 && semver("1.0.0-alpha.1").compareTo(semver("1.0.0-alpha")) == 1',
    'semver("1.0.0+build.1") == semver("1.0.0+build.2") && semver("1.0.0+a").compareTo(semver("1.0.0")) == 0',
    'semver("1.10.0").isGreaterThan(semver("1.9.0"))',
    'device.attributes["dra.example.com"].v.isGreaterThan(semver("1.2.2")) && device.attributes["dra.example.com"].v == semver("1.2.3")',
    'device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) == 0',
    'device.capacity["other.example.com"].cores.asInteger() == 108',
    'device.attributes["other.example.com"].model == "a100" && !("model" in device.attributes["dra.example.com"])',
    'device.attributes["no-such-domain"].size() == 0',
    '!("no-such-domain" in device.attributes) && device.attributes.size() == 2',
    'device.capacity["no-such-domain"].size() == 0',
    'device.capacity.size() == 2 && device.capacity.all(d, d in ["dra.example.com", "other.example.com"])',
    "cel.bind(d, device, d.driver == \"dra.example.com\" && d.attributes[\"dra.example.com\"].i == 7)",
    'device.driver.upperAscii() == "DRA.EXAMPLE.COM" && "a,b".split(",").size() == 2',
]


@pytest.mark.parametrize("expression", TRUE)
def test_true(expression: str) -> None:
    assert matches(expression) is True


RUNTIME_ERRORS = {
    'sign(quantity("1x")) == 1': "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    'quantity("1.5").asInteger() == 1': "cannot convert value to integer",
    'semver("1.2").major() == 1': "No Major.Minor.Patch elements found",
    'semver("").major() == 1': "Version string empty",
    'semver("01.2.3").major() == 1': 'Major number must not contain leading zeroes "01"',
    'semver("1.x.3").major() == 1': 'Invalid character(s) found in minor number "x"',
    'semver("1.2.3-01").major() == 1': 'Numeric PreRelease version must not contain leading zeroes "01"',
    'semver("1.2.3-a_b").major() == 1': 'Invalid character(s) found in prerelease "a_b"',
    'semver("1.2.3-").major() == 1': "Prerelease is empty",
    'semver("1.2.3+").major() == 1': "Build meta data is empty",
    'semver("1.2.3+a_b").major() == 1': 'Invalid character(s) found in build meta data "a_b"',
    'semver("v1.2-rc", true).major() == 1': "short version cannot contain PreRelease/Build meta data",
    'device.attributes["dra.example.com"].healthy': "no such key: healthy",
    'device.attributes["other.example.com"].healthy': "no such key: healthy",
    'device.attributes["no-such-domain"]["healthy"]': "no such key: healthy",
    'sign(device.capacity["dra.example.com"].cores) == 1': "no such key: cores",
    'device.attributes["dra.example.com"].s.isGreaterThan(quantity("1"))': "no such overload",
    'device.attributes["dra.example.com"].v.isGreaterThan(quantity("1"))': "no such overload",
    'device.attributes["dra.example.com"].i / 0 == 1': "division by zero",
    'device.attributes["dra.example.com"].i % 0 == 1': "modulus by zero",
    'device.attributes["dra.example.com"].i + 9223372036854775807 == 1': "integer overflow",
    'device.attributes["dra.example.com"].i': "CEL result of type int could not be converted to bool: unsupported type conversion from 'int' to bool",
    'device.attributes["dra.example.com"].s': "CEL result of type string could not be converted to bool: unsupported native conversion from string to 'bool'",
    'device.attributes["dra.example.com"].v': "CEL result of type kubernetes.Semver could not be converted to bool: type conversion error from 'Semver' to 'bool'",
    'cel.bind(d, device.attributes["dra.example.com"], d.foo)': "no such key: foo",
}  # fmt: skip


@pytest.mark.parametrize("expression", list(RUNTIME_ERRORS))
def test_runtime_error(expression: str) -> None:
    assert runtime_error(expression) == f"CEL runtime error: {RUNTIME_ERRORS[expression]}"


COMPILE_ERRORS = {
    'quantity("1") == 1': "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(kubernetes.Quantity, int)'\n"
    ' | quantity("1") == 1\n'
    " | ..............^",
    'semver("1.0.0").sign() == 1': "compilation failed: ERROR: <input>:1:21: found no matching overload for 'sign' applied to 'kubernetes.Semver.()'\n"
    ' | semver("1.0.0").sign() == 1\n'
    " | ....................^",
    'device.driver == 1': "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'\n"
    " | device.driver == 1\n"
    " | ..............^",
    'device.capacity["dra.example.com"].memory': "must evaluate to bool or the unknown type, not kubernetes.Quantity",
    '"fish"': "must evaluate to bool or the unknown type, not string",
    "[true]": "must evaluate to bool or the unknown type, not list(bool)",
    '{"a": 1.5}': "must evaluate to bool or the unknown type, not map(string, double)",
}  # fmt: skip


@pytest.mark.parametrize("expression", list(COMPILE_ERRORS))
def test_compile_error(expression: str) -> None:
    result = compile_expression(expression)
    assert str(result.error) == f"CEL compile error: {COMPILE_ERRORS[expression]}"
    with pytest.raises(CelError) as err:
        result.device_matches(DRV, DEVICE)
    assert str(err.value) == str(result.error)


def test_attribute_errors() -> None:
    bad_version = {"name": "d", "attributes": {"v": {"version": "1.0"}}}
    assert runtime_error("true", bad_version) == "CEL runtime error: attribute v: parse semantic version: No Major.Minor.Patch elements found"
    no_value = {"name": "d", "attributes": {"x": {}}}
    assert runtime_error("true", no_value) == "CEL runtime error: attribute x: unsupported attribute value"


def test_allow_multiple_allocations_and_driver_domain() -> None:
    device = {"name": "d", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "2Gi"}}}
    assert matches('device.allowMultipleAllocations && device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("1Gi"))', device, "gpu.example.com")
    assert matches('device.allowMultipleAllocations == false', {"name": "d"})


def test_memo_is_per_device_object() -> None:
    result = compile_expression('device.attributes["dra.example.com"].i == 7')
    device = copy.deepcopy(DEVICE)
    assert result.device_matches(DRV, device) is True
    assert result.device_matches(DRV, device) is True
    changed = copy.deepcopy(DEVICE)
    changed["attributes"]["i"] = {"int": 8}  # type: ignore[index]
    assert result.device_matches(DRV, changed) is False
    with pytest.raises(CelError) as err:  # the driver is part of the key: "i" is now other.example.com/i
        result.device_matches("other.example.com", device)
    assert str(err.value) == "CEL runtime error: no such key: i"
    failing = compile_expression('device.attributes["dra.example.com"].missing')
    for _ in range(2):
        with pytest.raises(CelError) as err:
            failing.device_matches(DRV, device)
        assert str(err.value) == "CEL runtime error: no such key: missing"


def test_cache_is_an_lru_of_compiled_expressions() -> None:
    cache = Cache(max_size=2)
    a = cache.get_or_compile("true")
    assert cache.get_or_compile("true") is a
    b = cache.get_or_compile("false")
    cache.get_or_compile("true")  # a is now the most recent
    cache.get_or_compile('device.driver == "x"')  # evicts b
    assert cache.get_or_compile("true") is a
    assert cache.get_or_compile("false") is not b
    broken = cache.get_or_compile("?!")
    assert broken.error is not None
    assert cache.get_or_compile("?!") is not broken  # compile errors are not kept, as in Go


def test_tags() -> None:
    assert celtypes.quantity_value(celtypes.q_quantity("1.5Ki")) == 1536
    assert celtypes.semver_parts(celtypes.s_semver("1.2.3-rc.1+b")) == (1, 2, 3, ("rc", 1))
    assert celtypes.go_quote('a"b\n') == '"a\\"b\\n"'
