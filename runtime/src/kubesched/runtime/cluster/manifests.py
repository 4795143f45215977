"""Reading a cluster file: multi-document Kubernetes YAML, bounded before PyYAML sees it.

* **Depth**: no node nested deeper than :data:`MAX_DEPTH` levels (aliases expanded). libyaml's
  composer recurses once per level in C: a file nested ~50,000 levels deep (100 KB of ``[``)
  overflows the C stack and kills the process. A cheap, conservative bound is taken from the
  text first (block nesting needs indentation or indicators at the start of a line; flow
  nesting needs a ``[`` or ``{`` in the same document; nesting through aliases needs both a
  ``&`` and a ``*``); only a file that may exceed it has its events scanned (libyaml's parser
  is not recursive) for the exact depth, before anything is composed.
* **Aliases**: go-yaml's rule (``document contains excessive aliasing``, in sigs.k8s.io/yaml
  as kubectl reads files): past 100 alias expansions and 1,000 nodes, at most 99 % of the
  nodes may come from aliases (10 % past 4,000,000 nodes); an alias inside the node it names
  is refused, as go-yaml does. A 708-byte "billion laughs" file is refused in microseconds.
* **Duplicate keys** in one mapping are an error naming the key and both lines (PyYAML keeps
  the last one silently; the API server's strict decoding refuses them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Hashable, Mapping
from typing import Any

import yaml

from kubesched.sdk import InvalidObjectError, Node
from kubesched.sdk._describe import suggest, type_name
from kubesched.sdk._text import cut, quote

from ..kinds import CLUSTER_SCOPED_KINDS, RESOURCE_API_VERSION, RESOURCE_KINDS
from ..yamlbounds import MAX_DEPTH, excessive_aliasing, short_tag

__all__ = ["MAX_DEPTH", "ManifestError", "Manifests", "apply_defaults", "load_manifests", "pod_problem"]

_BASE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MAP, _SEQ, _STR = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_SPECIAL_KEYS = frozenset({_MERGE, "tag:yaml.org,2002:value"})
_PLAIN_SCALARS = frozenset({"tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"})

# The text bound. A block collection nested in another starts at a greater column or after an
# indicator ("- ", "? ", ": ") at the start of its line, so a line whose prefix of spaces,
# indicators, anchors and tags is shorter than _BLOCK_COLUMNS is at most _BLOCK_COLUMNS + 2
# block levels deep; flow collections add one level per "[" or "{", and cannot cross a
# document marker.
_BLOCK_COLUMNS = 40
_FLOW_BUDGET = MAX_DEPTH - _BLOCK_COLUMNS - 4
# (searched as "\n" then the prefix, and matched at the start: a search for a literal first
# character is ~5x faster than one for "^"; anchors and tags only when the text has some)
_PREFIX = rf"[ \t?:\-]{{{_BLOCK_COLUMNS}}}"
_PREFIX_TAGS = rf"(?:[ \t?:\-]|[&!][^ \t\r\n]*){{{_BLOCK_COLUMNS}}}"
_LONG_PREFIX = (re.compile(_PREFIX), re.compile("\n" + _PREFIX))
_LONG_PREFIX_TAGS = (re.compile(_PREFIX_TAGS), re.compile("\n" + _PREFIX_TAGS))
_DOCUMENT_MARKER = re.compile(r"^(?:---|\.\.\.)(?=[ \t\r\n]|\Z)", re.M)


class ManifestError(ValueError):
    """A bad manifest: ``str(e)`` is one line naming the file, the object and the field."""


class _Bounds(Exception):
    """The text is nested too deeply or aliases too much: the message and where."""

    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.mark = mark


def _may_be_too_deep(text: str) -> bool:
    """False when the text cannot hold a node deeper than MAX_DEPTH nor any alias (C-speed
    string searches; the openb trace's 2.7 MB take ~2 ms)."""
    if "&" in text and "*" in text:
        return True
    first, other = _LONG_PREFIX_TAGS if "!" in text or "&" in text else _LONG_PREFIX
    if first.match(text) is not None or other.search(text) is not None:
        return True
    if text.count("[") + text.count("{") <= _FLOW_BUDGET:
        return False
    return any(doc.count("[") + doc.count("{") > _FLOW_BUDGET for doc in _DOCUMENT_MARKER.split(text))


def _check_bounds(text: str) -> None:
    """:func:`_scan_bounds` with libyaml; should libyaml stop first at its own nesting limit
    (libyaml 0.2.6, in PyYAML 6.0.4: its scanner looks ahead through a deep flow collection
    before the parser emits a single event), with PyYAML's Python parser, which has no limit
    and is as lazy, so that the message is this one, at the 101st level."""
    try:
        _scan_bounds(text, _BASE_LOADER)
    except yaml.YAMLError as e:
        if "maximum nesting depth" not in str(getattr(e, "problem", "") or ""):
            raise
        _scan_bounds(text, yaml.SafeLoader)


def _scan_bounds(text: str, loader: Any) -> None:
    """Scan the events of a text that may be too deep: raises _Bounds at the first node deeper
    than MAX_DEPTH (aliases expanded), at an alias inside its own anchor, or at excessive
    aliasing; malformed YAML raises PyYAML's error, as loading would."""
    start = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    end = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    depth = 0
    # per open collection: [height below it, expanded nodes in it, its anchor]
    stack: list[list[Any]] = []
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (height, expanded nodes)
    decoded = aliased = 0
    ev: Any  # the stubs' Event lacks the anchor of its subclasses
    for ev in yaml.parse(text, Loader=loader):
        t = type(ev)
        if t in start:
            depth += 1
            if depth > MAX_DEPTH:
                raise _Bounds(f"nested deeper than {MAX_DEPTH} levels", ev.start_mark)
            stack.append([0, 1, ev.anchor])
            if ev.anchor:
                sizes.pop(ev.anchor, None)  # open: an alias to it now is inside it
        elif t in end:
            height, count, anchor = stack.pop()
            depth -= 1
            if anchor:
                sizes[anchor] = (height + 1, count)
            if stack:
                top = stack[-1]
                top[0] = max(top[0], height + 1)
                top[1] += count
            else:
                decoded += count
        elif t is yaml.ScalarEvent:
            if ev.anchor:
                sizes[ev.anchor] = (0, 1)
            if stack:
                stack[-1][1] += 1
        elif t is yaml.AliasEvent:
            got = sizes.get(ev.anchor)
            if got is None:
                if any(s[2] == ev.anchor for s in stack):
                    raise _Bounds(f'alias "*{cut(ev.anchor)}" is inside the node it names', ev.start_mark)
                continue  # an undefined alias: the composer's error
            height, count = got
            if depth + height > MAX_DEPTH:
                raise _Bounds(f'nested deeper than {MAX_DEPTH} levels (through alias "*{cut(ev.anchor)}")', ev.start_mark)
            aliased += count
            decoded += count
            if stack:
                top = stack[-1]
                top[0] = max(top[0], height)
                top[1] += count
            running = decoded + sum(s[1] for s in stack)
            if excessive_aliasing(aliased, running):
                raise _Bounds("document contains excessive aliasing", ev.start_mark)
        elif t is yaml.DocumentStartEvent:
            decoded = aliased = 0
            sizes.clear()


class _Fallback(Exception):
    """The document has something the direct construction leaves to PyYAML's own."""


class _Loader(_BASE_LOADER):  # type: ignore[misc]
    """PyYAML's (C) safe loader, building each document directly: strings, maps and lists in
    one recursive pass, the resolved tag of each plain scalar looked up once per distinct
    value. The result is what ``SafeLoader`` builds (aliases give the same object); a document
    with anything else (merge keys, explicit tags, an unhashable key, a constructor error) is
    built again by PyYAML's own constructor, so what it accepts and its errors are unchanged.

    A key given twice in one mapping is built as PyYAML builds it (the last wins) and noted in
    ``duplicate`` (the key, its first and its second node), which ``load_manifests`` refuses."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}
        self.duplicate: tuple[Any, Any] | None = None

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if self.yaml_path_resolvers:  # none in the safe loader (Resolver.resolve's other branch)
            return super().resolve(kind, value, implicit)
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            tag = self._tags.get(value)
            if tag is None:
                tag = self._tags[value] = super().resolve(kind, value, implicit)
            return tag
        return _SEQ if kind is yaml.SequenceNode else _MAP

    def construct_document(self, node: Any) -> Any:
        self.duplicate = None
        try:
            data = self._build(node, {})
        except Exception:
            self.constructed_objects, self.recursive_objects, self.state_generators = {}, {}, []  # type: ignore[var-annotated]
            self._find_duplicate(node)  # before PyYAML's constructor merges "<<" keys into the nodes
            data = super().construct_document(node)
        return data

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        """PyYAML's, with a value its constructor cannot take (``!!int a``, ``!!float []``:
        ValueError, IndexError, ...) made a YAML error at the node."""
        try:
            return super().construct_object(node, deep)
        except (yaml.YAMLError, RecursionError, MemoryError):
            raise
        except Exception as e:
            value = f" from {quote(node.value)}" if type(node) is yaml.ScalarNode else ""
            raise yaml.constructor.ConstructorError(None, None, f"cannot construct {short_tag(node.tag)}{value} ({type(e).__name__})", node.start_mark) from None

    def _build(self, node: Any, memo: dict[Any, Any]) -> Any:
        tag = node.tag
        if tag == _STR and type(node) is yaml.ScalarNode:
            return node.value
        got = memo.get(node)
        if got is not None:
            return got
        build = self._build
        if tag == _MAP and type(node) is yaml.MappingNode:
            d: dict[Any, Any] = {}
            memo[node] = d
            for k, v in node.value:
                if k.tag in _SPECIAL_KEYS:
                    raise _Fallback
                key = build(k, memo)
                if type(key) is not str and not isinstance(key, Hashable):
                    raise _Fallback
                d[key] = build(v, memo)
            if len(d) != len(node.value) and self.duplicate is None:
                self._note_duplicate(node)
            return d
        if tag == _SEQ and type(node) is yaml.SequenceNode:
            seq: list[Any] = []
            memo[node] = seq
            seq.extend([build(v, memo) for v in node.value])
            return seq
        if tag in _PLAIN_SCALARS and type(node) is yaml.ScalarNode:
            return self.yaml_constructors[tag](self, node)
        raise _Fallback

    def _note_duplicate(self, node: Any) -> None:
        """Note the first key of the mapping ``node`` that is given twice (keys as built)."""
        first: dict[Any, Any] = {}
        for k, _v in node.value:
            if k.tag == _MERGE:
                continue
            try:
                key = self._build(k, {}) if type(k) is yaml.ScalarNode else None
                hash(key)
            except Exception:  # a tagged or unhashable key: PyYAML's to judge
                continue
            if key is None and k.tag != "tag:yaml.org,2002:null":
                continue
            if key in first:
                self.duplicate = (first[key], k)
                return
            first[key] = k

    def _find_duplicate(self, root: Any) -> None:
        """The first duplicate key of any mapping under ``root`` (iteratively)."""
        seen: set[int] = set()
        todo = [root]
        while todo and self.duplicate is None:
            node = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if type(node) is yaml.MappingNode:
                self._note_duplicate(node)
                todo.extend(v for kv in reversed(node.value) for v in reversed(kv))
            elif type(node) is yaml.SequenceNode:
                todo.extend(reversed(node.value))


# kinds of the built-in API groups, to catch typos such as "kind: Nod"
_BUILTIN_KINDS: dict[str, set[str]] = {
    "v1": {
        "Pod", "Node", "Namespace", "PersistentVolume", "PersistentVolumeClaim", "Service",
        "ReplicationController", "ConfigMap", "Secret", "ServiceAccount", "Endpoints", "Event",
        "LimitRange", "ResourceQuota", "List",
    },
    "apps/v1": {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "ControllerRevision"},
    "storage.k8s.io/v1": {"StorageClass", "CSINode", "CSIDriver", "CSIStorageCapacity", "VolumeAttachment"},
    "policy/v1": {"PodDisruptionBudget"},
    "scheduling.k8s.io/v1": {"PriorityClass"},
    "batch/v1": {"Job", "CronJob"},
    RESOURCE_API_VERSION: set(RESOURCE_KINDS),
}


class Manifests(list):  # type: ignore[type-arg]
    """The objects of a cluster file (a list of dicts), with the file and the document number
    (1-based) of each, for messages about one of them."""

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        self.documents: dict[int, int] = {}  # id(object) -> document number

    def where(self, obj: Mapping[str, Any]) -> str:
        doc = self.documents.get(id(obj))
        return _where(self.source, doc - 1, obj) if doc is not None else f"{self.source}: {_ident(obj)}"


def _ident(obj: Mapping[str, Any]) -> str:
    md = obj.get("metadata")
    kind = obj.get("kind") or "<no kind>"
    name = md.get("name") if isinstance(md, Mapping) else None
    ns = md.get("namespace") if isinstance(md, Mapping) else None
    ident = f"{ns}/{name}" if ns and name else (name or "<no name>")
    return f"{cut(kind)} {cut(ident)}"


def _where(source: str, index: int, obj: Mapping[str, Any] | None) -> str:
    if isinstance(obj, Mapping):
        return f"{source}: document {index + 1} ({_ident(obj)})"
    return f"{source}: document {index + 1}"


def _malformed(source: str, e: yaml.YAMLError) -> ManifestError:
    mark = getattr(e, "problem_mark", None)
    where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return ManifestError(f"{source}{where}: malformed YAML: {problem}")


def _read(source: str, text: str) -> list[tuple[int, Any]]:
    """The documents of ``text`` (None for an empty one), numbered from 0."""
    try:
        if _may_be_too_deep(text):
            _check_bounds(text)
    except _Bounds as e:
        raise ManifestError(f"{source}:{e.mark.line + 1}:{e.mark.column + 1}: {e}") from None
    except yaml.YAMLError as e:
        raise _malformed(source, e) from None
    loader = _Loader(text)
    docs: list[tuple[int, Any]] = []
    try:
        while loader.check_data():
            data = loader.get_data()
            if loader.duplicate is not None:
                first, second = loader.duplicate
                m = second.start_mark
                raise ManifestError(
                    f"{source}:{m.line + 1}:{m.column + 1}: document {len(docs) + 1}: duplicate key "
                    f"{quote(second.value)} (first at line {first.start_mark.line + 1})"
                )
            docs.append((len(docs), data))
    except yaml.YAMLError as e:
        raise _malformed(source, e) from None
    finally:
        loader.dispose()
    return docs


def load_manifests(path: str | os.PathLike[str]) -> Manifests:
    """Read a multi-document YAML file of Kubernetes objects (``kind: List`` is flattened).

    Raises ManifestError for malformed YAML, nesting deeper than MAX_DEPTH, excessive
    aliasing, duplicate keys, documents that are not objects, missing kind or apiVersion,
    unknown built-in kinds, missing names, duplicates, and invalid Nodes (quantities, taints).
    Pods are parsed later: a bad pod is reported as Error, not fatal.
    """
    source = os.fspath(path)
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ManifestError(f"{source}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ManifestError(f"{source}: not UTF-8 text (byte {e.start})") from None
    out = Manifests(source)
    seen: dict[tuple[str, str, str, str], int] = {}
    flat: list[tuple[int, Any]] = []
    for i, d in _read(source, text):
        if d is None:
            continue
        if isinstance(d, Mapping) and d.get("kind") == "List":
            items = d.get("items")
            if items is not None and not isinstance(items, list):
                raise ManifestError(f"{_where(source, i, d)}: items: expected a list, got {type_name(items)}")
            for item in items or []:
                flat.append((i, item))
        else:
            flat.append((i, d))
    for i, d in flat:
        where = _where(source, i, d if isinstance(d, Mapping) else None)
        if not isinstance(d, Mapping):
            raise ManifestError(f"{where}: expected a Kubernetes object (a mapping), got {type_name(d)}")
        api_version = d.get("apiVersion")
        kind = d.get("kind")
        if not kind or not isinstance(kind, str):
            raise ManifestError(f"{where}: kind: Required value")
        if not api_version or not isinstance(api_version, str):
            raise ManifestError(f"{where}: apiVersion: Required value")
        known = _BUILTIN_KINDS.get(api_version)
        if known is not None and kind not in known:
            close = suggest(kind, known)
            hint = f'; did you mean "{close}"?' if close else ""
            raise ManifestError(f"{where}: kind: unknown kind {quote(kind)} in {cut(api_version)}{hint}")
        md = d.get("metadata")
        if md is not None and not isinstance(md, Mapping):
            raise ManifestError(f"{where}: metadata: expected a mapping, got {type_name(md)}")
        if not md or not md.get("name"):
            raise ManifestError(f"{where}: metadata.name: Required value")
        for field in ("name", "namespace"):
            value = md.get(field)
            if value is not None and not isinstance(value, str):
                raise ManifestError(f"{where}: metadata.{field}: expected a string, got {type_name(value)}")
        if kind != "Pod":  # a Pod of a bad shape is an Error for that pod (pod_problem)
            for field in ("spec", "status"):
                value = d.get(field)
                if value is not None and not isinstance(value, Mapping):
                    raise ManifestError(f"{where}: {field}: expected a mapping, got {type_name(value)}")
        obj = dict(d)
        if kind == "Node":
            try:
                Node(obj).validate()
            except InvalidObjectError as e:
                raise ManifestError(f"{where}: {e}") from None
        ns = "" if kind in CLUSTER_SCOPED_KINDS else str(md.get("namespace") or "default")
        key = (api_version.split("/")[0] if "/" in api_version else "", kind, ns, str(md["name"]))
        if key in seen:
            raise ManifestError(f"{where}: duplicate object: {kind} {cut(ns + '/' if ns else '')}{cut(md['name'])} is already defined in document {seen[key] + 1}")
        seen[key] = i
        obj = apply_defaults(obj)
        out.documents[id(obj)] = i + 1
        out.append(obj)
    return out


def apply_defaults(obj: dict[str, Any]) -> dict[str, Any]:
    """The API server's defaulting of the fields the scheduler's plugins read (what a real
    cluster would have stored), so hand-written YAML behaves as it would after kubectl apply."""
    kind = obj.get("kind")
    if kind == "StorageClass":
        obj.setdefault("volumeBindingMode", "Immediate")
        obj.setdefault("reclaimPolicy", "Delete")
    elif kind in ("PersistentVolumeClaim", "PersistentVolume"):
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")
            if kind == "PersistentVolume":
                spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    elif kind == "Pod":
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("schedulerName", "default-scheduler")
    return obj


def pod_problem(obj: Mapping[str, Any]) -> str | None:
    """What the API server would refuse in a Pod's shape, before anything reads it: a
    metadata, spec or status that is not a mapping, labels or annotations that are not
    strings, a nodeName or schedulerName that is not a string. None when the shape is right
    (what is inside the spec is the Pod view's to check)."""
    md = obj.get("metadata")
    if not isinstance(md, Mapping):
        return f"metadata: expected a mapping, got {type_name(md)}"
    for field in ("labels", "annotations"):
        values = md.get(field)
        if values is None:
            continue
        if not isinstance(values, Mapping):
            return f"metadata.{field}: expected a mapping of strings, got {type_name(values)}"
        for k, v in values.items():
            if type(k) is not str:
                return f"metadata.{field}: key {cut(k)}: expected a string, got {type_name(k)}"
            if type(v) is not str and v is not None:
                return f"metadata.{field}[{cut(k)}]: expected a string, got {type_name(v)}"
    for field in ("spec", "status"):
        value = obj.get(field)
        if value is not None and not isinstance(value, Mapping):
            return f"{field}: expected a mapping, got {type_name(value)}"
    spec = obj.get("spec") or {}
    for field in ("nodeName", "schedulerName"):
        value = spec.get(field)
        if value is not None and not isinstance(value, str):
            return f"spec.{field}: expected a string, got {type_name(value)} ({cut(value)})"
    return None
