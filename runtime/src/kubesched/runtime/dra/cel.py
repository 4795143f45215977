"""CEL device selectors, as k8s.io/dynamic-resource-allocation@v0.36.3 cel/compile.go and cache.go evaluate them.

The environment is the apiserver's base environment as far as the CEL runtime (Google's C++ runtime,
``cel-expr-python``) offers it (the strings extension v2, regular expressions, ``cel.bind``), plus
Kubernetes' quantity and semver libraries (:mod:`.celtypes`), URL library (:mod:`.celurl`), IP and CIDR
libraries (:mod:`.celnet`; Go's ``string(ip)``/``string(cidr)`` are missing: the checker takes no overload of
``string`` on an abstract type inside an extension), the libraries of :mod:`.cellibs` and the ``device`` variable:
``device.driver``, ``device.allowMultipleAllocations``, ``device.attributes[domain][id]`` and
``device.capacity[domain][id]`` (a quantity). An attribute or capacity name without a domain gets the
device's driver as its domain. Go's attributes and capacity maps give an empty map for a domain they lack
(compile.go mapper.Find) while ``in``, ``size()`` and iteration see only the real domains. The runtime has no
such map, so: the domains an expression names by a constant key (``device.attributes["d"]``,
``device.attributes.d``, ``[?"d"]``, ``has(device.attributes.d)``) are added empty when the expression uses
those maps only by such lookups (exact); a failed lookup otherwise is retried with that domain added empty
(so an expression that in one evaluation both indexes a missing domain and asks ``"dom" in
device.attributes``, the outer map's size or iterates it, sees that domain; Go's does not).

``device`` alone (``cel.bind(d, device, ...)``) is Go's object type ``kubernetes.DRADevice``; the runtime
declares no object types without protobuf descriptors, so it is checked as a map with bool keys: ``"driver" in
device`` and ``device["driver"]`` are refused with Go's text, ``has(device.driver)`` is true; ``device.size()``,
``d.nosuch`` (Go: ``undefined field 'nosuch'``) and ``d.driver == 1`` still compile (the fields are dyn).

An expression is type-checked in an environment where quantities and versions are their own types (so
``quantity("1") == 1`` or ``semver("1.0.0").sign()`` are compile errors as in Go) and evaluated in one
where they are tagged strings and lists (the runtime takes no opaque values; see :mod:`.celtypes`). An
attribute is ``google.protobuf.Any`` where expressions are checked, so the result must be a bool or an
attribute as in Go (``dyn(true)`` does not compile).
Errors carry Go's text: ``CEL compile error: compilation failed: ERROR: <input>:1:1: ...`` (a member call's
argument types written ``target.(args)`` as cel-go does) and ``CEL runtime error: no such key: healthy``,
``index out of bounds: 5``, ``no such overload: size``. Texts still the C++ runtime's or timed differently:
an invalid constant regex, timestamp or duration, or a constant conversion overflow (Go: compile errors;
here runtime errors with the C++ text), ``substring``/``charAt`` out of range, ``no such overload`` where
cel-go names the function and argument types (``isSorted(int)``), and a transformMap comprehension (the
runtime cannot plan it). Go's cost limit (``actual cost limit exceeded``) is not enforced.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from functools import lru_cache
from threading import Lock
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_strings

from kubesched.sdk.quantity import QuantityError, parse_quantity

from . import cellibs, celnet, celtypes, celurl
from .celtypes import SemverError

__all__ = ["Cache", "CelError", "CompilationResult", "compile_expression"]

_T = cel.Type
_QUANTITY = _T.AbstractType("kubernetes.Quantity")
_SEMVER = _T.AbstractType("kubernetes.Semver")
#: an attribute's type where expressions are type-checked, as Go declares it (the binding names it ERROR)
_ANY = _T("google.protobuf.Any")
_NO_TYPE = _T.AbstractType("kubesched.NoSuchType")
_SCALARS = {"string": _T.STRING, "int": _T.INT, "bool": _T.BOOL, "double": _T.DOUBLE}
_IP = _T.AbstractType("net.IP")
_CIDR = _T.AbstractType("net.CIDR")
_URL = _T.AbstractType("kubernetes.URL")
_QUERY = _T.Map(_T.STRING, _T.List(_T.STRING))
_FUNCTIONS = celtypes.QUANTITY_FUNCTIONS + celtypes.SEMVER_FUNCTIONS + celnet.NET_FUNCTIONS + celurl.URL_FUNCTIONS


class CelError(Exception):
    """A selector that did not compile or failed to evaluate; ``str()`` is Go's text after ``selector #N: ``."""


#: which `device` declarations an environment has: the typed fields only; also `device` itself; or only `device`
LEAN, BARE, HAS = 0, 1, 2

#: the bare `device` where expressions are type-checked: a map keyed by bool, so that the checker refuses
#: `"driver" in device` and `device["driver"]` as Go's (an object type kubernetes.DRADevice) does
_CHECK_DEVICE = _T.Map(_T.BOOL, _T.DYN)
_CHECK_DEVICE_NAME = "map(bool, dyn)"


def _variables(quantity: Any, attribute: Any, mode: int, device: Any) -> dict[str, Any]:
    # The fields of `device` are declared as qualified names, which the checker prefers, so `device.driver`
    # is typed and `device.driver == 1` does not compile. `device` alone (cel.bind(d, device, ...)) is a map,
    # declared only in the environments for the expressions that need it (it costs a second map per device).
    # The checker also takes `has(device.driver)` for the qualified name (giving the field's value), so an
    # expression with has() on a field of `device` is checked where only `device` is declared (mode HAS).
    bare_device = {"device": device} if mode != LEAN else {}
    if mode == HAS:
        return bare_device
    return {
        **bare_device,
        "device.driver": _T.STRING,
        "device.allowMultipleAllocations": _T.BOOL,
        "device.attributes": _T.Map(_T.STRING, _T.Map(_T.STRING, attribute)),
        "device.capacity": _T.Map(_T.STRING, _T.Map(_T.STRING, quantity)),
    }


def _check_env(mode: int) -> Any:
    """Quantity and Semver as their own types: for type-checking only (values of them cannot be evaluated)."""
    kinds = {**_SCALARS, "Q": _QUANTITY, "S": _SEMVER, "IP": _IP, "CIDR": _CIDR, "URL": _URL, "QUERY": _QUERY}
    by_name: dict[str, list[Any]] = {}
    for name, oid, member, params, result, impl in _FUNCTIONS:
        by_name.setdefault(name, []).append(
            cel.Overload(oid, kinds[result], [kinds[p] for p in params], is_member=member, impl=impl)
        )
    # Go declares sign(q) only as a global; a member overload on a type no value has makes `q.sign()` Go's
    # "found no matching overload" rather than the C++ checker's "undeclared reference".
    by_name["sign"].append(cel.Overload("kubesched_no_member_sign", _T.INT, [_NO_TYPE], is_member=True))
    return cel.NewEnv(
        config=cel.NewEnvConfigFromYaml(cellibs.EXTENSIONS_CONFIG),
        variables=_variables(_QUANTITY, _ANY, mode, _CHECK_DEVICE),
        extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(2), _library(check=True)],
        functions=[cel.FunctionDecl(n, o) for n, o in by_name.items()],
    )


def _lib_type(sig: str, check: bool) -> Any:
    opaque = cellibs.OPAQUE_TYPES.get(sig)
    if opaque is not None:
        return _T.AbstractType(opaque[0]) if check else _T(opaque[1])
    if sig.startswith("list("):
        return _T.List(_lib_type(sig[5:-1], check) if check else _T.DYN)
    if sig.startswith("map("):
        key, value = _split_params(sig[4:-1])
        return _T.Map(_lib_type(key, check), _lib_type(value, check))
    return _LIB_SCALARS[sig]


#: cel type signatures of cellibs' rows (a type made from a signature is a message type inside an extension)
_LIB_SCALARS = {
    "int": _T.INT, "uint": _T.UINT, "double": _T.DOUBLE, "bool": _T.BOOL, "string": _T.STRING, "bytes": _T.BYTES,
    "duration": _T.DURATION, "timestamp": _T.TIMESTAMP, "dyn": _T.DYN,
}  # fmt: skip


def _library(check: bool) -> Any:
    """:mod:`.cellibs`' functions, as an extension (so `string` and the strings extension's `indexOf` gain overloads).

    The runtime keeps one implementation per name and argument kinds (a list of any element type is one
    kind), so where Go has an overload per element type the check environment gives the first the
    implementation (it is never evaluated there) and the run environment declares one overload.
    """
    by_name: dict[str, list[Any]] = {}
    kinds_seen: set[tuple[str, bool, tuple[str, ...]]] = set()
    results: dict[tuple[str, bool, tuple[str, ...]], set[str]] = {}
    for name, _oid, member, params, result, _impl in cellibs.LIBRARY_FUNCTIONS:
        run_key = (name, member, tuple(str(_lib_type(p, False).name()) for p in params))
        results.setdefault(run_key, set()).add(result)
    for name, oid, member, params, result, impl in cellibs.LIBRARY_FUNCTIONS:
        if check:
            kinds = (name, member, tuple(p.split("(", 1)[0] for p in params))
            first = kinds not in kinds_seen
            kinds_seen.add(kinds)
            overload = cel.Overload(
                oid, _lib_type(result, True), [_lib_type(p, True) for p in params], is_member=member,
                **({"impl": impl} if first else {}),
            )
        else:
            run_key = (name, member, tuple(str(_lib_type(p, False).name()) for p in params))
            if run_key in kinds_seen:
                continue
            kinds_seen.add(run_key)
            out = results[run_key]
            returns = _lib_type(next(iter(out)), False) if len(out) == 1 else _T.DYN
            overload = cel.Overload(
                f"kubesched_{oid}", returns, [_lib_type(p, False) for p in params], is_member=member, impl=impl
            )
        by_name.setdefault(name, []).append(overload)
    return cel.CelExtension("kubernetes", [cel.FunctionDecl(n, o) for n, o in by_name.items()])


def _run_env(mode: int) -> Any:
    """Quantities as lists and versions as tagged strings: the environment expressions are evaluated in."""
    kinds = {
        **_SCALARS, "Q": _T.List(_T.DYN), "S": _T.STRING, "IP": _T.List(_T.DYN), "CIDR": _T.List(_T.DYN),
        "URL": _T.STRING, "QUERY": _QUERY,
    }
    by_name: dict[str, list[Any]] = {}
    for name, oid, member, params, result, impl in _FUNCTIONS:
        by_name.setdefault(name, []).append(
            cel.Overload(f"kubesched_{oid}", kinds[result], [kinds[p] for p in params], is_member=member, impl=impl)
        )
    return cel.NewEnv(
        config=cel.NewEnvConfigFromYaml(cellibs.EXTENSIONS_CONFIG),
        variables=_variables(_T.List(_T.DYN), _T.DYN, mode, _T.Map(_T.STRING, _T.DYN)),
        extensions=[ext_bindings.ExtBindings(), ext_strings.ExtStrings(2), _library(check=False)],
        functions=[cel.FunctionDecl(n, o) for n, o in by_name.items()],
    )


#: (check, run) environments per mode (LEAN, BARE, HAS), built on first use
_ENVS: dict[int, tuple[Any, Any]] = {}
_ENV_LOCK = Lock()


def _envs(mode: int = LEAN) -> tuple[Any, Any]:
    envs = _ENVS.get(mode)
    if envs is None:
        with _ENV_LOCK:
            envs = _ENVS.get(mode)
            if envs is None:
                envs = _ENVS[mode] = (_check_env(mode), _run_env(mode))
    return envs


_STATUS = re.compile(r"^[A-Z_]+: ")
_STATUS_SUFFIX = re.compile(r" \[[A-Z_]+\]$")


def _strip_status(text: str) -> str:
    return _STATUS_SUFFIX.sub("", _STATUS.sub("", text, count=1))


#: cel-go's type names (common/types) for the checker's type names, in compile errors
_GO_TYPE_NAMES = {
    "BOOL": "bool", "INT": "int", "UINT": "uint", "DOUBLE": "double", "STRING": "string", "BYTES": "bytes",
    "NULL": "null_type", "DYN": "dyn", "TIMESTAMP": "google.protobuf.Timestamp",
    "DURATION": "google.protobuf.Duration", "ERROR": "google.protobuf.Any", "TYPE": "type",
}  # fmt: skip


def _go_type_name(name: str) -> str:
    m = re.fullmatch(r"(LIST|MAP|TYPE|OPTIONAL_TYPE|optional_type)<(.*)>", name)
    if m:
        kind = {"LIST": "list", "MAP": "map", "TYPE": "type"}.get(m.group(1), "optional_type")
        return f"{kind}({', '.join(_go_type_name(p) for p in _split_params(m.group(2)))})"
    return _GO_TYPE_NAMES.get(name, name)


def _split_params(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


#: how many devices the memos below keep (per compiled expression, and for the converted inputs)
MEMO_SIZE = 8192


class CompilationResult:
    """A compiled selector (Go's ``cel.CompilationResult``).

    Results are memoised by the device dict's identity (and the driver): a device object is taken to be
    immutable once evaluated, as the object stores and informer caches keep them (an update replaces the
    object). Each memo entry holds the device itself, so its ``id()`` cannot be reused while it is kept.
    """

    __slots__ = ("_domains", "_memo", "_mode", "_program", "error", "expression")

    def __init__(
        self, expression: str, error: CelError | None, program: Any, mode: int = LEAN, domains: tuple[str, ...] = ()
    ) -> None:
        self.expression = expression
        self.error = error
        self._program = program
        self._mode = mode
        self._domains = domains
        self._memo: dict[tuple[int, str], tuple[Mapping[str, Any], bool, str | None]] = {}

    def __repr__(self) -> str:
        return f"CompilationResult({self.expression!r}, error={self.error!r})"

    def device_matches(self, driver: str, device: Mapping[str, Any]) -> bool:
        """Whether ``device`` (one entry of a v1 ResourceSlice's ``spec.devices``) of ``driver`` matches.

        Raises :class:`CelError` (``CEL runtime error: ...``) when the evaluation fails or gives no bool,
        and the compile error when the expression did not compile.
        """
        if self.error is not None:
            raise CelError(str(self.error))
        key = (id(device), driver)
        hit = self._memo.get(key)
        if hit is not None and hit[0] is device:
            if hit[2] is not None:
                raise CelError(hit[2])
            return hit[1]
        try:
            matches = _evaluate(self._program, _inputs(driver, device), self._mode, self._domains)
        except CelError as err:
            self._remember(key, (device, False, str(err)))
            raise
        self._remember(key, (device, matches, None))
        return matches

    def _remember(self, key: tuple[int, str], entry: tuple[Mapping[str, Any], bool, str | None]) -> None:
        if len(self._memo) >= MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = entry


class _Inputs:
    """One device as the ``device`` variable: the activation data, built once per device object."""

    __slots__ = ("activations", "attributes", "capacity", "device", "driver", "error", "multi")

    def __init__(self, driver: str, device: Mapping[str, Any]) -> None:
        self.device = device
        self.driver = driver
        self.error: str | None = None
        self.activations: list[Any] = [None, None, None]
        self.multi = bool(device.get("allowMultipleAllocations") or False)
        try:
            self.attributes, self.capacity = _device_maps(driver, device)
        except CelError as err:
            self.error = str(err)

    def activation(self, mode: int) -> Any:
        act = self.activations[mode]
        if act is None:
            act = self.activations[mode] = _activation(self.driver, self.multi, self.attributes, self.capacity, mode)
        return act


def _activation(driver: str, multi: bool, attributes: dict[str, Any], capacity: dict[str, Any], mode: int) -> Any:
    data: dict[str, Any] = {}
    if mode != HAS:
        data = {
            "device.driver": driver,
            "device.allowMultipleAllocations": multi,
            "device.attributes": attributes,
            "device.capacity": capacity,
        }
    if mode != LEAN:
        data["device"] = {"driver": driver, "allowMultipleAllocations": multi, "attributes": attributes, "capacity": capacity}
    return _envs(mode)[1].Activation(data)


_INPUTS: dict[tuple[int, str], _Inputs] = {}


def _inputs(driver: str, device: Mapping[str, Any]) -> _Inputs:
    key = (id(device), driver)
    hit = _INPUTS.get(key)
    if hit is not None and hit.device is device:
        return hit
    inputs = _Inputs(driver, device)
    if len(_INPUTS) >= MEMO_SIZE:
        _INPUTS.clear()
    _INPUTS[key] = inputs
    return inputs


def _evaluate(program: Any, inputs: _Inputs, mode: int, domains: tuple[str, ...]) -> bool:
    if inputs.error is not None:
        raise CelError(inputs.error)
    activation, attributes, capacity = inputs.activation(mode), inputs.attributes, inputs.capacity
    added = 0
    for domain in domains:  # the domains the expression names, present (empty) as Go's mapper.Find has them
        if domain not in attributes or domain not in capacity:
            if added == 0:
                attributes, capacity = dict(attributes), dict(capacity)
            attributes.setdefault(domain, {})
            capacity.setdefault(domain, {})
            added = 1
    if added:
        activation = _activation(inputs.driver, inputs.multi, attributes, capacity, mode)
    while True:
        try:
            result = program.eval(activation)
        except RuntimeError as err:  # what the runtime cannot plan: transformMap's cel.@mapInsert
            raise CelError(f"CEL runtime error: {_strip_status(str(err))}") from None
        kind = result.type().name()
        if kind == "BOOL":
            return bool(result.value())
        if kind != "ERROR":
            raise CelError(f"CEL runtime error: {_not_bool(kind, result)}")
        text = _strip_status(str(result.value()))
        missing = _MISSING_KEY.fullmatch(text)
        if missing is None:
            raise CelError(f"CEL runtime error: {_go_error(text)}")
        key = missing.group(1)
        # Go's attributes and capacity maps give an empty map for a domain they lack (compile.go mapper.Find);
        # `in` and iteration still see only the real domains. Retry with the missing key as an empty domain.
        if added < 9 and (key not in attributes or key not in capacity):
            if added == 0:
                attributes, capacity = dict(attributes), dict(capacity)
            attributes.setdefault(key, {})
            capacity.setdefault(key, {})
            activation = _activation(inputs.driver, inputs.multi, attributes, capacity, mode)
            added += 1
            continue
        raise CelError(f"CEL runtime error: no such key: {key}")


_MISSING_KEY = re.compile(r'Key not found in map : "(.*)"', re.DOTALL)

_GO_ERRORS = {"divide by zero": "division by zero"}
#: C++ runtime texts with a cel-go counterpart (interpreter and common/types)
_GO_PATTERNS = [
    (re.compile(r"Index error: index=(-?\d+) size=\d+"), "index out of bounds: {0}"),
    (re.compile(r"Key not found in map : (.*)", re.DOTALL), "no such key: {0}"),
    (re.compile(r"No matching overloads found : (?:size\(.*\)|\(.*\)\.size\(\))"), "no such overload: size"),
]


def _go_error(text: str) -> str:
    for pattern, go in _GO_PATTERNS:
        m = pattern.fullmatch(text)
        if m is not None:
            return go.format(*m.groups())
    if text.startswith("No matching overloads found") or text.startswith("No matching overload"):
        return celtypes.NO_SUCH_OVERLOAD
    return _GO_ERRORS.get(text, text)


#: Go's ConvertToNative(bool) error per result type (cel-go common/types, apiserver cel Quantity/Semver)
_NOT_BOOL = {
    "INT": ("int", "unsupported type conversion from 'int' to bool"),
    "UINT": ("uint", "unsupported type conversion from 'uint' to bool"),
    "DOUBLE": ("double", "type conversion error from Double to 'bool'"),
    "STRING": ("string", "unsupported native conversion from string to 'bool'"),
    "BYTES": ("bytes", "type conversion error from Bytes to 'bool'"),
    "NULL": ("null_type", "type conversion error from 'null_type' to 'bool'"),
    "LIST": ("list", "type conversion error from list to 'bool'"),
    "MAP": ("map", "type conversion error from map to 'bool'"),
}


def _not_bool(kind: str, result: Any) -> str:
    if kind.startswith("LIST"):
        value = result.plain_value()
        if len(value) == 3 and isinstance(value[0], str) and value[0].startswith(celtypes.QUANTITY_TAG):
            name, why = "kubernetes.Quantity", "type conversion error from 'Quantity' to 'bool'"
            return f"CEL result of type {name} could not be converted to bool: {why}"
    if kind == "STRING":
        value = result.value()
        if value.startswith(celtypes.SEMVER_TAG):
            name, why = "kubernetes.Semver", "type conversion error from 'Semver' to 'bool'"
            return f"CEL result of type {name} could not be converted to bool: {why}"
    base = kind.split("<", 1)[0]
    name, why = _NOT_BOOL.get(base, (_go_type_name(kind), f"type conversion error from {_go_type_name(kind)} to 'bool'"))
    return f"CEL result of type {name} could not be converted to bool: {why}"


def _split_name(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


@lru_cache(maxsize=4096)
def _version_tag(text: str) -> str:
    return celtypes.semver_tag(celtypes.parse_semver(text))


@lru_cache(maxsize=4096)
def _quantity_tag(value: Any) -> list[object]:
    return celtypes.quantity_tag(parse_quantity(value), celtypes.parse_form(value if isinstance(value, str) else str(value)))


def _attribute_value(name: str, attr: Any) -> Any:
    if isinstance(attr, Mapping):
        if attr.get("int") is not None:
            return attr["int"]
        if attr.get("bool") is not None:
            return attr["bool"]
        if attr.get("string") is not None:
            return attr["string"]
        if attr.get("version") is not None:
            try:
                return _version_tag(attr["version"])
            except SemverError as err:
                raise CelError(f"CEL runtime error: attribute {name}: parse semantic version: {err}") from None
    raise CelError(f"CEL runtime error: attribute {name}: unsupported attribute value")


def _capacity_value(name: str, cap: Any) -> list[object]:
    value = cap.get("value") if isinstance(cap, Mapping) else None
    try:
        return _quantity_tag(value)
    except QuantityError as err:
        raise CelError(f"CEL runtime error: capacity {name}: {err}") from None


def _device_maps(driver: str, device: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    attributes: dict[str, dict[str, Any]] = {}
    for name, attr in (device.get("attributes") or {}).items():
        value = _attribute_value(name, attr)
        domain, ident = _split_name(name, driver)
        attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, Any]] = {}
    for name, cap in (device.get("capacity") or {}).items():
        domain, ident = _split_name(name, driver)
        capacity.setdefault(domain, {})[ident] = _capacity_value(name, cap)
    return attributes, capacity


#: has() on a field of the bare `device` (checked in the HAS environment)
_HAS_FIELD = re.compile(r"\bhas\s*\(\s*device\s*\.\s*(?:driver|allowMultipleAllocations|attributes|capacity)\s*\)")
#: device.attributes / device.capacity, and what follows: an index with a constant key, a field, or else
_MAPS = re.compile(
    r"\bdevice\s*\.\s*(?:attributes|capacity)\b\s*"
    r"""(?:\[\s*\??\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]|\.\s*\??\s*([A-Za-z_]\w*)\b(?!\s*\()|(\[))?"""
)


def _named_domains(expression: str) -> tuple[str, ...]:
    """The domains an expression looks up in device.attributes/capacity by constant name, when it uses those
    maps only that way (so an empty domain added for each is invisible but to has(), [?d] and the lookup)."""
    domains: list[str] = []
    for m in _MAPS.finditer(expression):
        name = m.group(1) if m.group(1) is not None else m.group(2) if m.group(2) is not None else m.group(3)
        if name is None:
            if m.group(4) is None:  # `in`, size(), iteration, cel.bind, ...: the real domains count
                return ()
            continue  # a computed key: the retry in _evaluate covers a failed lookup
        if name not in domains:
            domains.append(name)
    return tuple(domains)


def compile_expression(expression: str) -> CompilationResult:
    """Compile a selector (uncached), as Go's ``CompileCELExpression`` with the stored-expressions environment."""
    mode = HAS if _HAS_FIELD.search(expression) else LEAN
    try:
        checked = _envs(mode)[0].compile(expression)
    except RuntimeError as lean_err:
        if mode == HAS or "undeclared reference to 'device'" not in str(lean_err):
            return CompilationResult(expression, _compile_error(lean_err, expression), None)
        mode = BARE
        try:
            checked = _envs(mode)[0].compile(expression)
        except RuntimeError as err:
            return CompilationResult(expression, _compile_error(err, expression), None)
    out = checked.return_type().name()
    # Go (compile.go) accepts bool and google.protobuf.Any (an attribute), and dyn only with DRAListTypeAttributes
    # (off in 1.36). The binding names Any "ERROR"; a checked expression has no error type otherwise.
    if out not in ("BOOL", "ERROR"):
        text = f"must evaluate to bool or the unknown type, not {_go_type_name(out)}"
        return CompilationResult(expression, CelError(f"CEL compile error: {text}"), None)
    try:
        program = _envs(mode)[1].compile(expression)
    except RuntimeError as err:  # pragma: no cover - what the checker accepts, the runtime environment accepts
        return CompilationResult(expression, _compile_error(err, expression), None)
    return CompilationResult(expression, None, program, mode, _named_domains(expression))


_NO_OVERLOAD = re.compile(r"ERROR: <input>:(\d+):(\d+): found no matching overload for '([^']*)' applied to '\((.*)\)'$")


def _compile_error(err: RuntimeError, expression: str) -> CelError:
    lines = _strip_status(str(err)).split("\n")
    source = expression.split("\n")
    for i, line in enumerate(lines):
        m = _NO_OVERLOAD.match(line)
        if m is None:
            continue
        # cel-go writes a member call's argument types as 'target.(args)', the C++ checker '(target, args)'
        row, col, name, args = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        before = source[row - 1][: col - 1].rstrip() if row <= len(source) else ""
        if before.endswith(name) and before[: -len(name)].rstrip().endswith("."):
            target, *rest = _split_params(args)
            args = f"{target}.({', '.join(rest)})"
        else:
            args = f"({args})"
        lines[i] = f"{line[: m.start(4) - 1]}{args}'".replace(_CHECK_DEVICE_NAME, "kubernetes.DRADevice")
    return CelError(f"CEL compile error: compilation failed: {chr(10).join(lines)}")


class Cache:
    """Go's ``cel.Cache``: an LRU of successfully compiled expressions (compile errors are not kept)."""

    def __init__(self, max_size: int = 10) -> None:
        self.max_size = max_size
        self._entries: OrderedDict[str, CompilationResult] = OrderedDict()
        self._lock = Lock()

    def get_or_compile(self, expression: str) -> CompilationResult:
        with self._lock:
            hit = self._entries.get(expression)
            if hit is not None:
                self._entries.move_to_end(expression)
                return hit
        result = compile_expression(expression)
        if result.error is None and self.max_size > 0:
            with self._lock:
                self._entries[expression] = result
                self._entries.move_to_end(expression)
                while len(self._entries) > self.max_size:
                    self._entries.popitem(last=False)
        return result
