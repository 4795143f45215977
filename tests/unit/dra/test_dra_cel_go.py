"""Go's behaviour of the `device` variable, the output type, quantities' forms and error texts, each case
checked against k8s.io/dynamic-resource-allocation@v0.36.3 cel (``GetCompiler(Features{EnableConsumableCapacity:
true}).CompileCELExpression`` and ``DeviceMatches``) on the device below.

Ids name the Go source: ``compile.go:<line>`` (dynamic-resource-allocation cel/compile.go: 189 the accepted
output types, 380 the ``kubernetes.DRADevice`` object type, 518 ``mapper.Find``'s empty map for a missing
domain), ``quantity.go:<line>`` (apiserver@v0.36.3 pkg/cel/library/quantity.go: 162 ``sign`` as a global, 241
``isInteger``/``asInteger`` on apimachinery's ``Quantity.AsInt64``), ``GoTestQuantity/<case>`` (quantity_test.go)
and ``cel-go/<case>`` (cel-go's interpreter and checker texts).
"""

from __future__ import annotations

import pytest

from kubesched.runtime.dra.cel import CelError, compile_expression

DRIVER = "drv"
DEVICE = {
    "name": "d",
    "allowMultipleAllocations": False,
    "attributes": {
        "numa": {"int": 1},
        "model": {"string": "a100"},
        "healthy": {"bool": True},
        "ver": {"version": "1.2.3"},
        "ip": {"string": "10.0.0.7"},
        "other.example.com/x": {"string": "y"},
    },
    "capacity": {"mem": {"value": "40Gi"}},
}

# (id, expression, "match" | "compile" | "runtime", the match or Go's error text without "CEL ... error: ")
CASES = [
    ('compile.go:189/dyn', 'dyn(true)', 'compile', 'must evaluate to bool or the unknown type, not dyn'),
    ('compile.go:189/dyn-attribute', 'dyn(device.attributes["drv"].healthy)', 'compile', 'must evaluate to bool or the unknown type, not dyn'),
    ('compile.go:189/any-attribute', 'device.attributes["drv"].healthy', 'match', True),
    ('compile.go:189/map-of-any', 'device.attributes["drv"]', 'compile', 'must evaluate to bool or the unknown type, not map(string, google.protobuf.Any)'),
    ('compile.go:380/has-allowMultipleAllocations', 'has(device.allowMultipleAllocations)', 'match', True),
    ('compile.go:380/has-driver', 'has(device.driver)', 'match', True),
    ('compile.go:380/has-attributes-capacity', 'has(device.attributes) && has(device.capacity)', 'match', True),
    ('compile.go:380/in-device', '"driver" in device', 'compile', 'compilation failed: ERROR: <input>:1:10: found no matching overload for \'@in\' applied to \'(string, kubernetes.DRADevice)\'\n | "driver" in device\n | .........^'),
    ('compile.go:380/index-device', 'device["driver"] == "drv"', 'compile', 'compilation failed: ERROR: <input>:1:7: found no matching overload for \'_[_]\' applied to \'(kubernetes.DRADevice, string)\'\n | device["driver"] == "drv"\n | ......^'),
    ('compile.go:380/bind-device', 'cel.bind(d, device, d.driver == "drv" && d.attributes["drv"].numa == 1)', 'match', True),
    ('compile.go:518/has-missing-domain', 'has(device.attributes.gpu)', 'match', True),
    ('compile.go:518/has-missing-capacity-domain', 'has(device.capacity.x)', 'match', True),
    ('compile.go:518/optional-index-missing-domain', 'device.attributes[?"x.example.com"].hasValue()', 'match', True),
    ('compile.go:518/optional-field-missing-domain', 'device.attributes.?nosuch.hasValue()', 'match', True),
    ('compile.go:518/optional-capacity-missing-domain', 'device.capacity[?"x.example.com"].orValue({"a": quantity("1")}).size() == 0', 'match', True),
    ('compile.go:518/has-in-missing-domain', 'has(device.attributes["x.example.com"].y) == false', 'match', True),
    ('quantity.go:162/sign-global', 'sign(device.capacity["drv"].mem) == 1 && sign(quantity("-1m")) == -1 && sign(quantity("0")) == 0', 'match', True),
    ('quantity.go:162/sign-member', 'device.capacity["drv"].mem.sign() == 1', 'compile', 'compilation failed: ERROR: <input>:1:32: found no matching overload for \'sign\' applied to \'kubernetes.Quantity.()\'\n | device.capacity["drv"].mem.sign() == 1\n | ...............................^'),
    ('quantity.go:241/isInteger-dec-1.5Ki', 'quantity("1.5Ki").isInteger()', 'match', False),
    ('quantity.go:241/isInteger-negative-scale-1.0', 'quantity("1.0").isInteger()', 'match', False),
    ('quantity.go:241/isInteger-negative-scale-0.0', 'quantity("0.0").isInteger()', 'match', False),
    ('quantity.go:241/isInteger-negative-scale-1000m', 'quantity("1000m").isInteger()', 'match', False),
    ('quantity.go:250/asInteger-dec-1.5Gi', 'quantity("1.5Gi").asInteger() == 1', 'runtime', 'cannot convert value to integer'),
    ('quantity.go:241/isInteger-int64Amount', 'quantity("1k").asInteger() == 1000 && quantity("1Ki").asInteger() == 1024 && quantity("0").isInteger() && quantity("1e3").isInteger()', 'match', True),
    ('quantity.go:241/isInteger-overflow-1e20', 'quantity("1e20").isInteger()', 'match', False),
    ('GoTestQuantity/add_quantity-sub-asInteger', 'quantity("50k").add(20).sub(quantity("100k")).asInteger() == -49980', 'match', True),
    ('GoTestQuantity/add_quantity-sub-sub-asInteger', 'quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() == 20', 'match', True),
    ('quantity.go:241/add-takes-smaller-scale', 'quantity("1").add(quantity("1m")).isInteger()', 'match', False),
    ('quantity.go:241/add-sub-keeps-smaller-scale', 'quantity("1").add(quantity("1m")).sub(quantity("1m")).isInteger()', 'match', False),
    ('quantity.go:241/dec-minus-dec', 'quantity("1.5Ki").sub(quantity("1.5Ki")).isInteger()', 'match', False),
    ('quantity.go:241/zero-plus-takes-other-form', 'quantity("0.0").add(quantity("2")).isInteger()', 'match', True),
    ('quantity.go:241/plus-zero-keeps-form', 'quantity("2").add(quantity("0.0")).isInteger()', 'match', True),
    ('quantity.go:241/int64-overflow-becomes-dec', 'quantity("9223372036854775807").add(1).sub(1).isInteger()', 'match', False),
    ('quantity.go:241/capacity-binary', 'device.capacity["drv"].mem.isInteger() && device.capacity["drv"].mem.asInteger() == 42949672960', 'match', True),
    ('GoTestQuantity/equality-across-forms', 'quantity("1000m") == quantity("1") && quantity("200M") == quantity("0.2G") && [quantity("1")].indexOf(quantity("1000m")) == 0', 'match', True),
    ('GoTestQuantity/isInteger-too-big', 'quantity("9999999999999999999999999999999999999G").isInteger()', 'match', False),
    ('cel-go/index-out-of-bounds', '[1, 2][5] == 1', 'runtime', 'index out of bounds: 5'),
    ('cel-go/negative-index', '[1, 2, 3][-1] == 3', 'runtime', 'index out of bounds: -1'),
    ('cel-go/no-such-key-int', '{1: 2}[dyn(3)] == 1', 'runtime', 'no such key: 3'),
    ('cel-go/no-such-overload-size', 'device.attributes["drv"].numa.size() == 1', 'runtime', 'no such overload: size'),
    ('cel-go/member-overload-text-list', "['a', 'b'].sum() == 'c'", 'compile', "compilation failed: ERROR: <input>:1:15: found no matching overload for 'sum' applied to 'list(string).()'\n | ['a', 'b'].sum() == 'c'\n | ..............^"),
    ('cel-go/member-overload-text-string', "'a'.findAll(1) == []", 'compile', "compilation failed: ERROR: <input>:1:12: found no matching overload for 'findAll' applied to 'string.(int)'\n | 'a'.findAll(1) == []\n | ...........^"),
    ('compile.go:189/quantity', 'quantity("1")', 'compile', 'must evaluate to bool or the unknown type, not kubernetes.Quantity'),
]  # fmt: skip


@pytest.mark.parametrize(("expression", "kind", "expect"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_as_go(expression: str, kind: str, expect: object) -> None:
    result = compile_expression(expression)
    if kind == "compile":
        assert str(result.error) == f"CEL compile error: {expect}"
        return
    assert result.error is None, result.error
    if kind == "runtime":
        with pytest.raises(CelError) as err:
            result.device_matches(DRIVER, DEVICE)
        assert str(err.value) == f"CEL runtime error: {expect}"
        return
    assert result.device_matches(DRIVER, DEVICE) is expect
