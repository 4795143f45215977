"""The rest of the apiserver's base CEL environment in DRA selectors (kubesched.runtime.dra.cellibs).

Cases are transcribed from Go's tables where Go has them; ids name the Go test and case:
``GoTestValidationExpressions/<case>`` is k8s.io/apiextensions-apiserver@v0.36.3
pkg/apiserver/schema/cel/validation_test.go (``self.<field>`` replaced by the field's value there),
``GoTestIP/<name>`` and ``GoTestCIDR/<name>`` are apiserver@v0.36.3 pkg/cel/library ip_test.go and cidr_test.go.
"""

from __future__ import annotations

import cel_support
import pytest
from cel_support import compile_error, matches

DEVICE = {
    "name": "nic-0",
    "attributes": {
        "str": {"string": "this is a 123 string 456"},
        "ints": {"int": 3},
        "ip": {"string": "10.0.0.7"},
        "url": {"string": "https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor"},
    },
}


def evaluate(expression: str) -> bool:
    return matches(expression, DEVICE)


def runtime_error(expression: str) -> str:
    return cel_support.runtime_error(expression, DEVICE)


INTS, DOUBLES, STRINGS = "[1, 2, 2, 3]", "[1.0, 2.0, 2.0, 3.0]", "['a', 'b', 'b', 'c']"
DURATIONS = "[duration('1s'), duration('1m'), duration('1m'), duration('1h')]"
DATES = "[timestamp('2000-01-01T00:00:00Z'), timestamp('2000-02-01T00:00:00Z'), timestamp('2000-02-01T00:00:00Z'), timestamp('2010-01-01T00:00:00Z')]"
OBJS = "[{'f1': 'a', 'f2': 'a'}, {'f1': 'a', 'f2': 'b'}, {'f1': 'a', 'f2': 'b'}, {'f1': 'a', 'f2': 'c'}]"

TRUE = {
    # library.Lists
    "GoTestValidationExpressions/lists/ints.sum": f"{INTS}.sum() == 8",
    "GoTestValidationExpressions/lists/ints.min": f"{INTS}.min() == 1",
    "GoTestValidationExpressions/lists/ints.max": f"{INTS}.max() == 3",
    "GoTestValidationExpressions/lists/emptyInts.sum": "dyn([]).sum() == 0",
    "GoTestValidationExpressions/lists/ints.isSorted": f"{INTS}.isSorted()",
    "GoTestValidationExpressions/lists/emptyInts.isSorted": "[].isSorted()",
    "GoTestValidationExpressions/lists/unsortedInts.isSorted": "[2, 1].isSorted() == false",
    "GoTestValidationExpressions/lists/ints.indexOf": f"{INTS}.indexOf(2) == 1 && {INTS}.indexOf(10) == -1",
    "GoTestValidationExpressions/lists/ints.lastIndexOf": f"{INTS}.lastIndexOf(2) == 2 && {INTS}.lastIndexOf(10) == -1",
    "GoTestValidationExpressions/lists/doubles": f"{DOUBLES}.sum() == 8.0 && {DOUBLES}.min() == 1.0 && {DOUBLES}.max() == 3.0",
    "GoTestValidationExpressions/lists/doubles.isSorted": f"{DOUBLES}.isSorted() && [2.0, 1.0].isSorted() == false",
    "GoTestValidationExpressions/lists/doubles.indexOf": f"{DOUBLES}.indexOf(2.0) == 1 && {DOUBLES}.lastIndexOf(2.0) == 2 && {DOUBLES}.indexOf(10.0) == -1",
    "GoTestValidationExpressions/lists/durations.isSorted": f"{DURATIONS}.isSorted() && [duration('1m'), duration('1s')].isSorted() == false",
    "GoTestValidationExpressions/lists/durations.indexOf": f"{DURATIONS}.indexOf(duration('1m')) == 1 && {DURATIONS}.lastIndexOf(duration('1m')) == 2 && {DURATIONS}.indexOf(duration('2m')) == -1",
    "GoTestValidationExpressions/lists/strings": f"{STRINGS}.min() == 'a' && {STRINGS}.max() == 'c' && {STRINGS}.isSorted() && ['b', 'a'].isSorted() == false",
    "GoTestValidationExpressions/lists/strings.indexOf": f"{STRINGS}.indexOf('b') == 1 && {STRINGS}.lastIndexOf('b') == 2 && {STRINGS}.indexOf('x') == -1",
    "GoTestValidationExpressions/lists/dates.isSorted": f"{DATES}.isSorted()",
    "GoTestValidationExpressions/lists/dates.indexOf": f"{DATES}.indexOf(timestamp('2000-02-01T00:00:00Z')) == 1 && {DATES}.lastIndexOf(timestamp('2000-02-01T00:00:00Z')) == 2",
    "GoTestValidationExpressions/lists/deep-equals-list": "[[1], [2]].indexOf([1]) == 0",
    "GoTestValidationExpressions/lists/deep-equals-map": "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
    "GoTestValidationExpressions/lists/objs": f"{OBJS}.indexOf({OBJS}[1]) == 1 && {OBJS}.lastIndexOf({OBJS}[1]) == 2",
    "GoTestValidationExpressions/lists/min-with-default": "([0] + []).min() == 0",
    "GoTestValidationExpressions/lists/dyn-sum": "dyn([1, 2]).sum() == 3 && dyn([1.0, 2.0]).sum() == 3.0",
    "GoTestValidationExpressions/lists/empty-sum": "[].sum() == 0",
    "lists/bytes": "[b'a', b'b'].max() == b'b' && [b'a', b'b'].indexOf(b'b') == 1",
    "lists/heterogeneous-numbers-equal": "dyn([1, 2.0]).indexOf(2) == 1",
    "lists/bool-is-not-one": "dyn([true, 1]).indexOf(1) == 1",
    "lists/string-indexOf-still-works": "'abc'.indexOf('b') == 1 && 'abcb'.lastIndexOf('b') == 3",
    "lists/device-attribute": 'device.attributes["dra.example.com"].ints in [1, 2, 3] && [1, device.attributes["dra.example.com"].ints].max() == 3',
    # library.Regex
    "GoTestValidationExpressions/regex/find": 'device.attributes["dra.example.com"].str.find("[0-9]+") == "123"',
    "GoTestValidationExpressions/regex/find-not": 'device.attributes["dra.example.com"].str.find("[0-9]+") != "456"',
    "GoTestValidationExpressions/regex/find-none": 'device.attributes["dra.example.com"].str.find("xyz") == ""',
    "GoTestValidationExpressions/regex/findAll": 'device.attributes["dra.example.com"].str.findAll("[0-9]+") == ["123", "456"]',
    "GoTestValidationExpressions/regex/findAll-0": 'device.attributes["dra.example.com"].str.findAll("[0-9]+", 0) == []',
    "GoTestValidationExpressions/regex/findAll-1": 'device.attributes["dra.example.com"].str.findAll("[0-9]+", 1) == ["123"]',
    "GoTestValidationExpressions/regex/findAll-2": 'device.attributes["dra.example.com"].str.findAll("[0-9]+", 2) == ["123", "456"]',
    "GoTestValidationExpressions/regex/findAll-3": 'device.attributes["dra.example.com"].str.findAll("[0-9]+", 3) == ["123", "456"]',
    "GoTestValidationExpressions/regex/findAll-minus-1": 'device.attributes["dra.example.com"].str.findAll("[0-9]+", -1) == ["123", "456"]',
    "GoTestValidationExpressions/regex/findAll-none": 'device.attributes["dra.example.com"].str.findAll("xyz") == [] && "x".findAll("xyz", 1) == []',
    "regex/findAll-empty-matches-as-go": '"123 a".findAll("[0-9]*") == ["123", "", ""]',
    # cel-go extensions of the base environment, as the C++ runtime ships them
    "ext.Sets": "sets.contains([1, 2, 3], [2]) && sets.equivalent([1, 2], [2, 1]) && !sets.intersects([1], [2])",
    "ext.Lists(v2)": "[3, 1, 2].sort() == [1, 2, 3] && lists.range(3) == [0, 1, 2] && [1, 2, 2].distinct() == [1, 2] && [[1], [2]].flatten() == [1, 2] && [1, 2, 3].slice(1, 2) == [2] && [1, 2].reverse() == [2, 1] && [{'a': 2}, {'a': 1}].sortBy(e, e.a) == [{'a': 1}, {'a': 2}]",
    "ext.TwoVarComprehensions": "[1, 2].exists(i, v, i == 1 && v == 2) && {'a': 1}.all(k, v, k == 'a' && v == 1) && [1, 2].existsOne(i, v, v == 1) && [1, 2].transformList(i, v, v * 2) == [2, 4]",
    "cel.OptionalTypes": "optional.of(1).hasValue() && !optional.none().hasValue() && optional.none().orValue(3) == 3 && {'a': 1}[?'b'].orValue(2) == 2 && [1, 2, 3].first().value() == 1 && [1, 2, 3].last().value() == 3",
    "cel.OptionalTypes/attribute": 'device.attributes["dra.example.com"][?"missing"].orValue("none") == "none"',
}  # fmt: skip


@pytest.mark.parametrize("expression", list(TRUE.values()), ids=list(TRUE))
def test_true(expression: str) -> None:
    assert evaluate(expression) is True


RUNTIME_ERRORS = {
    "GoTestValidationExpressions/lists/emptyInts.min": ("dyn([]).min() == 1", "min called on empty list"),
    "GoTestValidationExpressions/lists/emptyInts.max": ("dyn([]).max() == 3", "max called on empty list"),
    "GoTestValidationExpressions/lists/emptyStrings.min": ("[''].filter(s, s != '').min() == 'a'", "min called on empty list"),
    "lists/sum-overflow": ("[9223372036854775807, 1].sum() == 0", "integer overflow"),
    "lists/sum-mixed-types": ("dyn([1, 2.0]).sum() == 3", "no such overload"),
    "lists/quantities-are-not-comparable": ('dyn([quantity("1"), quantity("2")]).isSorted()', "no such overload"),
    "lists/quantities-are-not-summable": ('dyn([quantity("1")]).sum() == quantity("1")', "no such overload"),
    "lists/durations-sum-out": ("[duration('1s'), duration('2s')].sum() == duration('3s')",
                                "sum of durations or timestamps is not supported by kubesched's CEL runtime"),
    "lists/durations-min-out": (f"{DURATIONS}.min() == duration('1s')",
                                "min of durations or timestamps is not supported by kubesched's CEL runtime"),
    "GoTestValidationExpressions/regex/find-invalid": ("'x'.find(')') == ''", "Illegal regex: error parsing regexp: unexpected ): `)`"),
    "GoTestValidationExpressions/regex/findAll-invalid": ("'x'.findAll(')') == []", "Illegal regex: error parsing regexp: unexpected ): `)`"),
    "GoTestValidationExpressions/regex/findAll-1-invalid": ("'x'.findAll(')', 1) == []", "Illegal regex: error parsing regexp: unexpected ): `)`"),
    "regex/missing-paren": ("'x'.find('(a') == ''", "Illegal regex: error parsing regexp: missing closing ): `(a`"),
    "regex/missing-bracket": ("'x'.find('a[b') == ''", "Illegal regex: error parsing regexp: missing closing ]: `[b`"),
    "regex/missing-repeat-argument": ("'x'.find('*') == ''", "Illegal regex: error parsing regexp: missing argument to repetition operator: `*`"),
    "ext.TwoVarComprehensions/transformMap-out": ("{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}",
                                                  "No overload found in reference resolve step for cel.@mapInsert"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(RUNTIME_ERRORS.values()), ids=list(RUNTIME_ERRORS))
def test_runtime_error(case: tuple[str, str]) -> None:
    expression, text = case
    assert runtime_error(expression) == f"CEL runtime error: {text}"


COMPILE_ERRORS = {
    "GoTestValidationExpressions/lists/sum-strings": "ERROR: <input>:1:15: found no matching overload for 'sum' applied to 'list(string).()'\n"
    " | ['a', 'b'].sum() == 'c'\n"
    " | ..............^",
    "GoTestValidationExpressions/lists/min-lists": "ERROR: <input>:1:15: found no matching overload for 'min' applied to 'list(list(int)).()'\n"
    " | [[1], [2]].min() == [1]\n"
    " | ..............^",
    "GoTestValidationExpressions/lists/max-maps": "ERROR: <input>:1:25: found no matching overload for 'max' applied to 'list(map(string, int)).()'\n"
    " | [{'a': 1}, {'b': 2}].max() == {'b': 2}\n"
    " | ........................^",
    "regex/findAll-int-pattern": "ERROR: <input>:1:12: found no matching overload for 'findAll' applied to 'string.(int)'\n"
    " | 'a'.findAll(1) == []\n"
    " | ...........^",
}  # fmt: skip


@pytest.mark.parametrize("text", list(COMPILE_ERRORS.values()), ids=list(COMPILE_ERRORS))
def test_compile_error(text: str) -> None:
    expression = text.split("\n")[1][3:]
    assert compile_error(expression) == f"CEL compile error: compilation failed: {text}"
