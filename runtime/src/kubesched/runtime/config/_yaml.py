"""YAML reading as sigs.k8s.io/yaml does it, with positions and strictness.

* YAML 1.1 scalars (PyYAML's SafeLoader resolvers, like go-yaml v2), except that timestamps stay
  strings (they are strings once converted to JSON);
* a duplicate key in a mapping is an error (kube-scheduler decodes its config strictly);
* merge keys (``<<``) are honoured;
* the file must hold exactly one document.

Every node's 1-based line is recorded under its field path so errors can point at it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent
from yaml.nodes import MappingNode, Node, ScalarNode

from kubesched.sdk._text import SCALAR_LIMIT, cut, quote

from ..yamlbounds import MAX_DEPTH, excessive_aliasing, short_path, short_tag
from ._types import KIND, ConfigError

_CORE = "tag:yaml.org,2002:"
#: YAML 1.1's tags (yaml.org/type); on a scalar go-yaml resolves these five against the text
_RESOLVED_TAGS = frozenset({"int", "float", "bool", "null", "timestamp"})
#: ...reads these as the text (!!binary base64-decoded), and ignores every tag on a collection
_CORE_TAGS = frozenset(
    {*_RESOLVED_TAGS, "str", "binary", "map", "seq", "set", "omap", "pairs", "merge", "value", "yaml"}
)


def too_deep(source: str | None, path: str, line: int | None = None) -> ConfigError:
    where = f" (line {line})" if line else ""
    return ConfigError(
        source, short_path(path), f"nested deeper than {MAX_DEPTH} levels{where}", line=line
    )


class _Loader(yaml.SafeLoader):
    """SafeLoader whose timestamps stay strings, composing at most :data:`MAX_DEPTH` levels and
    refusing tags other than YAML 1.1's; explicit tags are kept for the converter."""

    def __init__(self, text: str, source: str | None) -> None:
        super().__init__(text)
        self.source = source
        #: field paths of the collections being composed
        self.open_paths: list[str] = []
        #: id(node) -> the explicit tag written on it (``!!int 3``)
        self.explicit: dict[int, str] = {}

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        if self.check_event(AliasEvent):
            alias: Any = super().compose_node(parent, index)
            return alias
        event: Any = self.peek_event()
        mark: Any = event.start_mark
        path = self._path(parent, index, event)
        tag = event.tag
        if tag is not None and tag != "!" and (
            not tag.startswith(_CORE) or tag[len(_CORE):] not in _CORE_TAGS
        ):
            line = event.start_mark.line + 1
            raise ConfigError(
                self.source,
                path,
                f"unsupported YAML tag {quote(short_tag(tag))} (line {line}): kubesched reads "
                "YAML 1.1's core tags only (!!str, !!int, !!float, !!bool, !!null, !!binary, "
                "!!timestamp, !!map, !!seq, ...)",
                line=line,
            )
        if isinstance(event, CollectionStartEvent):
            if len(self.open_paths) >= MAX_DEPTH:
                raise too_deep(self.source, path, mark.line + 1)
            self.open_paths.append(path)
            try:
                node: Any = super().compose_node(parent, index)
            finally:
                self.open_paths.pop()
        else:
            node = super().compose_node(parent, index)
        if tag is not None and tag != "!":
            self.explicit[id(node)] = tag
        return node

    def _path(self, parent: Node | None, index: Any, event: Any) -> str:
        base = self.open_paths[-1] if self.open_paths else ""
        if parent is None:
            return base
        if isinstance(index, int):
            return join_index(base, index)
        if isinstance(index, ScalarNode):
            return join_key(base, index.value)
        if index is None and isinstance(event, ScalarEvent):  # a key
            return join_key(base, event.value)
        return base


_Loader.add_constructor(
    "tag:yaml.org,2002:timestamp",
    _Loader.construct_yaml_str,  # type: ignore[type-var]
)


def join_key(path: str, key: str) -> str:
    if len(key) > SCALAR_LIMIT:  # a pasted token as a key: the path quotes it cut
        key = cut(key)
    return f"{path}.{key}" if path else key


def join_index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def parse_document(text: str, source: str | None) -> tuple[Any, dict[str, int]]:
    """The single YAML document in ``text`` as plain Python data, and ``{path: line}``."""
    try:
        loader = _Loader(text, source)
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise ConfigError(
            source,
            f"line {line}, column {column}",
            f"invalid YAML: unacceptable character {_char(exc.character)}: {exc.reason}",
            line=line,
        ) from exc
    try:
        nodes: list[Node] = []
        while loader.check_node():
            node = loader.get_node()
            if node is not None and not _is_null(node):
                nodes.append(node)
        if not nodes:
            raise ConfigError(source, "", f"the file holds no YAML document; expected one {KIND}")
        if len(nodes) > 1:
            line = nodes[1].start_mark.line + 1
            raise ConfigError(
                source,
                f"line {line}",
                f"a second YAML document starts here; the file must hold exactly one {KIND}",
                line=line,
            )
        converter = _Converter(loader, source)
        data = converter.convert(nodes[0], "")
        return data, converter.positions
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or "syntax error"
        if exc.context:
            problem = f"{problem} ({exc.context})"
        if mark is None:
            raise ConfigError(source, "", f"invalid YAML: {problem}") from exc
        line, column = mark.line + 1, mark.column + 1
        raise ConfigError(
            source, f"line {line}, column {column}", f"invalid YAML: {problem}", line=line
        ) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"invalid YAML: {exc}") from exc
    finally:
        loader.dispose()


def _char(character: object) -> str:
    return f"#x{character:04x}" if isinstance(character, int) else repr(character)


def _is_null(node: Node) -> bool:
    return (
        isinstance(node, ScalarNode)
        and node.tag == "tag:yaml.org,2002:null"
        and node.value in ("", "~", "null", "Null", "NULL")
    )


class _Converter:
    """Composed YAML nodes to plain data, recording each path's line.

    Aliases are expanded here (the composer shares the anchored node), under go-yaml's budget;
    the expanded data nests at most :data:`MAX_DEPTH` levels too.
    """

    def __init__(self, loader: _Loader, source: str | None) -> None:
        self.loader = loader
        self.source = source
        self.positions: dict[str, int] = {}
        self.merged_counts: dict[int, int] = {}
        self.active: set[int] = set()
        self.seen: set[int] = set()
        self.decodes = 0
        self.aliases = 0
        self.alias_depth = 0
        self.depth = 0

    def _tick(self, node: Node, path: str) -> None:
        """go-yaml's ``decoder.unmarshal`` accounting: one more value decoded."""
        self.decodes += 1
        if self.alias_depth:
            self.aliases += 1
        if excessive_aliasing(self.aliases, self.decodes):
            line = node.start_mark.line + 1
            raise ConfigError(
                self.source,
                path,
                f"invalid YAML: document contains excessive aliasing ({self.aliases} of the "
                f"first {self.decodes} values come from aliases)",
                line=line,
            )

    def convert(self, node: Node, path: str) -> Any:
        if id(node) not in self.seen:
            self.seen.add(id(node))
            return self._convert(node, path)
        # a second occurrence is an alias: go-yaml counts the alias node, then its target
        self._tick(node, path)
        self.alias_depth += 1
        try:
            return self._convert(node, path)
        finally:
            self.alias_depth -= 1

    def _convert(self, node: Node, path: str) -> Any:
        self._tick(node, path)
        self.positions.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if id(node) in self.active:
            raise ConfigError(
                self.source,
                path,
                "recursive YAML alias: a node contains itself",
                line=node.start_mark.line + 1,
            )
        if self.depth >= MAX_DEPTH:  # aliases nest their target at the alias's depth
            raise too_deep(self.source, path, node.start_mark.line + 1)
        self.active.add(id(node))
        self.depth += 1
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            return [self.convert(item, join_index(path, i)) for i, item in enumerate(node.value)]
        finally:
            self.depth -= 1
            self.active.discard(id(node))

    def scalar(self, node: ScalarNode, path: str) -> Any:
        """The scalar's value as go-yaml (v2 ``resolve``) gives it."""
        tag = self.loader.explicit.get(id(node))
        text: str = node.value
        if tag is None:
            return self._construct(node)
        name = tag[len(_CORE):]
        if name == "binary":
            try:
                data = base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)
            except (binascii.Error, ValueError):
                raise self._tag_error(node, path, "!!binary value contains invalid base64 data") from None
            return data.decode("utf-8", errors="replace")
        if name not in _RESOLVED_TAGS:  # !!str, and a collection's tag on a scalar: the text
            return text
        implicit = self.loader.resolve(ScalarNode, text, (True, False))
        value = self._construct(ScalarNode(implicit, text, node.start_mark, node.end_mark))
        resolved = implicit[len(_CORE):]
        if isinstance(value, str) and resolved not in ("str", "timestamp"):
            resolved = "str"  # not what the resolver took it for ("0x_")
        if resolved == name:
            return value
        if name == "float" and resolved == "int":
            return float(value)
        raise self._tag_error(
            node, path, f"cannot decode !!{resolved} {quote(text)} as a !!{name}"
        )

    def _construct(self, node: ScalarNode) -> Any:
        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, ArithmeticError, LookupError):
            # what PyYAML's resolver took for a number but is not one ("0x_"): go-yaml's string
            return node.value

    def _tag_error(self, node: Node, path: str, message: str) -> ConfigError:
        line = node.start_mark.line + 1
        return ConfigError(self.source, path, f"invalid YAML: {message} (line {line})", line=line)

    def _mapping(self, node: MappingNode, path: str) -> dict[str, Any]:
        if id(node) not in self.merged_counts:  # an aliased node is flattened once
            own = sum(1 for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge")
            self.loader.flatten_mapping(node)
            # flatten_mapping puts the merged (``<<``) entries first; they may be overridden.
            self.merged_counts[id(node)] = len(node.value) - own
        merged = self.merged_counts[id(node)]
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        from_merge: set[str] = set()
        for index, (key_node, value_node) in enumerate(node.value):
            if not isinstance(key_node, ScalarNode):
                raise ConfigError(
                    self.source,
                    path,
                    "field names must be strings, not YAML collections",
                    line=key_node.start_mark.line + 1,
                )
            self._tick(key_node, path)
            key = _key_text(self.scalar(key_node, path))
            child = join_key(path, key)
            key_line = key_node.start_mark.line + 1
            if index < merged:
                from_merge.add(key)
            elif key in from_merge:  # an explicit key overrides a merged one
                from_merge.discard(key)
                del out[key]
            if key in out and index >= merged:
                raise ConfigError(
                    self.source,
                    child,
                    f"duplicate field {quote(key)} (first set on line {first_line[key]})",
                    line=key_line,
                )
            first_line[key] = key_line
            self.positions.setdefault(child, key_line)
            out[key] = self.convert(value_node, child)
        return out


def _key_text(key: Any) -> str:
    # sigs.k8s.io/yaml turns non-string keys into their JSON/YAML text.
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)


def plain_data(data: Any, path: str = "", source: str | None = None, depth: int = 0) -> Any:
    """A deep copy of in-memory data with only dict/list/scalars (keys must be strings), nested at
    most :data:`MAX_DEPTH` levels (a structure that contains itself is too deep)."""
    if isinstance(data, Mapping):
        if depth >= MAX_DEPTH:
            raise too_deep(source, path)
        out: dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(key, str):
                raise ConfigError(
                    source, path, f"field names must be strings, got {type(key).__name__}"
                )
            out[key] = plain_data(value, join_key(path, key), source, depth + 1)
        return out
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes, bytearray)):
        if depth >= MAX_DEPTH:
            raise too_deep(source, path)
        return [
            plain_data(item, join_index(path, i), source, depth + 1) for i, item in enumerate(data)
        ]
    return data
