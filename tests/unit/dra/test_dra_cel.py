"""TestCEL of k8s.io/dynamic-resource-allocation@v0.36.3 cel/compile_test.go, transcribed (the cases without list-type attributes).

Go's table asserts that an error contains a fragment; each case here asserts kubesched's whole text and
that Go's fragment is in it. Two cases are not transcribed: "expensive" (Go aborts it with
``actual cost limit exceeded``; kubesched enforces no cost limit) and "allow_multiple_allocations_disabled"
(the NewExpressions environment with DRAConsumableCapacity off, which API validation uses, not the scheduler).
"""

from __future__ import annotations

import pytest

from kubesched.runtime.dra.cel import CelError, compile_expression

DRV = "dra.example.com"

ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""

SYNTAX_ERROR = (
    "CEL compile error: compilation failed: ERROR: <input>:1:1: Syntax error: extraneous input '?' expecting "
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
    " | ?!\n"
    " | ^\n"
    "ERROR: <input>:1:3: Syntax error: extraneous input '<EOF>' expecting "
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
    " | ?!\n"
    " | ..^"
)

# name: (expression, driver, allowMultipleAllocations, attributes, capacity,
#        (Go's compile error fragment, kubesched's text) | None, (Go's match error fragment, kubesched's text) | None, match)
CASES = {
    "true": ("true", "", None, {}, {}, None, None, True),
    "false": ("false", "", None, {}, {}, None, None, False),
    "syntax-error": ("?!", "", None, {}, {}, ("Syntax error", SYNTAX_ERROR), None, False),
    "type-error": ("1", "", None, {}, {}, ("must evaluate to bool or the unknown type, not int",
                   "CEL compile error: must evaluate to bool or the unknown type, not int"), None, False),
    "runtime-error-lookup-identifier": (
        'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', "", None, {}, {}, None,
        ("no such key: noSuchAttr", "CEL runtime error: no such key: noSuchAttr"), False),
    "runtime-error-lookup-map": (
        'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', "", None, {}, {}, None,
        ("no such key: noSuchAttr", "CEL runtime error: no such key: noSuchAttr"), False),
    "domain-check-negative": ('"no-such-domain" in device.attributes', "", None, {}, {}, None, None, False),
    "domain-check-positive": ('"dra.example.com" in device.attributes', "", None,
                              {"dra.example.com/something": {"bool": True}}, {}, None, None, True),
    "empty-driver-name": ('device.driver == ""', "", None, {}, {}, None, None, True),
    "real-driver-name": ('device.driver == "dra.example.com"', DRV, None, {}, {}, None, None, True),
    "driver-name-qualifier": ('device.attributes["dra.example.com"].name', DRV, None,
                              {"name": {"bool": True}}, {}, None, None, True),
    "driver-name-qualifier-map-lookup": ('device.attributes["dra.example.com"]["name"]', DRV, None,
                                         {"name": {"bool": True}}, {}, None, None, True),
    "bind": ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', DRV, None,
             {"name": {"bool": True}}, {}, None, None, True),
    "qualified-attribute-name": ('device.attributes["other.example.com"].name', DRV, None,
                                 {"other.example.com/name": {"bool": True}}, {}, None, None, True),
    "bool": ('device.attributes["dra.example.com"].name', DRV, None, {"name": {"bool": True}}, {}, None, None, True),
    "int": ('device.attributes["dra.example.com"].name > 0', DRV, None, {"name": {"int": 1}}, {}, None, None, True),
    "string": ('device.attributes["dra.example.com"].name == "fish"', DRV, None,
               {"name": {"string": "fish"}}, {}, None, None, True),
    "attribute-access-causes-match-error": (
        'device.attributes["dra.example.com"].names', DRV, None, {"names": {"strings": ["fish", "bird"]}}, {}, None,
        ("attribute names: unsupported attribute value",
         "CEL runtime error: attribute names: unsupported attribute value"), False),
    "includes-function-undeclared-error": (
        'device.attributes["dra.example.com"].name.includes("fish")', DRV, None, {}, {},
        ("undeclared reference to 'includes'",
         "CEL compile error: compilation failed: ERROR: <input>:1:51: undeclared reference to 'includes' (in container '')\n"
         ' | device.attributes["dra.example.com"].name.includes("fish")\n'
         " | ..................................................^"), None, False),
    "version": ('device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))', DRV, None,
                {"name": {"version": "1.0.0"}}, {}, None, None, True),
    "version_v": ('device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
                  DRV, None, {"name": {"version": "1.0.0"}}, {}, None, None, True),
    "quantity": ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', DRV, None,
                 {}, {"name": {"value": "1Mi"}}, None, None, True),
    "check-positive": ('"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
                       DRV, None, {}, {"name": {"value": "1Mi"}}, None, None, True),
    "check-negative": ('!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
                       "", None, {}, {}, None, None, True),
    "all": (ALL, DRV, None,
            {"bool": {"bool": True}, "int": {"int": 1}, "string": {"string": "fish"}, "version": {"version": "1.0.0"}},
            {"quantity": {"value": "1Mi"}}, None, None, True),
    "many": ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c',
             DRV, None, {"a": {"bool": True}, "b": {"bool": True}, "c": {"bool": True}}, {}, None, None, True),
    "check_attribute_domains": ('device.attributes.exists_one(x, x == "dra.example.com")', DRV, None,
                                {"services": {"string": "some_example_value"}}, {}, None, None, True),
    "check_attribute_ids": ('device.attributes["dra.example.com"].exists_one(x, x == "services")', DRV, None,
                            {"services": {"string": "some_example_value"}}, {}, None, None, True),
    "split_attribute": ('device.attributes["dra.example.com"].services.split("example").size() >= 2', DRV, None,
                        {"services": {"string": "some_example_value"}}, {}, None, None, True),
    "regexp_attribute": ('device.attributes["dra.example.com"].services.matches("[^a]?sym")', DRV, None,
                         {"services": {"string": "asymetric"}}, {}, None, None, True),
    "check_capacity_domains": ('device.capacity.exists_one(x, x == "dra.example.com")', DRV, None,
                               {}, {"memory": {"value": "1Mi"}}, None, None, True),
    "check_capacity_ids": ('device.capacity["dra.example.com"].exists_one(x, x == "memory")', DRV, None,
                           {}, {"memory": {"value": "1Mi"}}, None, None, True),
    "allow_multiple_allocations": ("device.allowMultipleAllocations == true", DRV, True, {}, {}, None, None, True),
    "allow_multiple_allocations_default": ("device.allowMultipleAllocations == false", DRV, None, {}, {}, None, None, True),
    "allow_multiple_allocations_false": ("device.allowMultipleAllocations == false", DRV, False, {}, {}, None, None, True),
    "allow_multiple_allocations_new": ("device.allowMultipleAllocations == false", DRV, False, {}, {}, None, None, True),
    "allow_multiple_allocations_enabled": ("device.allowMultipleAllocations == false", DRV, False, {}, {}, None, None, True),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES), ids=[f"GoTestCEL/{n}" for n in CASES])
def test_go_cel(name: str) -> None:
    expression, driver, multi, attributes, capacity, compile_error, match_error, expect = CASES[name]
    result = compile_expression(expression)
    assert result.expression == expression
    if compile_error is not None:
        fragment, text = compile_error
        assert result.error is not None
        assert str(result.error) == text
        assert fragment in text
        return
    assert result.error is None
    device: dict[str, object] = {"name": "device-0", "attributes": attributes, "capacity": capacity}
    if multi is not None:
        device["allowMultipleAllocations"] = multi
    if match_error is not None:
        fragment, text = match_error
        with pytest.raises(CelError) as err:
            result.device_matches(driver, device)
        assert str(err.value) == text
        assert fragment in text
        return
    assert result.device_matches(driver, device) is expect
