"""YAML reading as sigs.k8s.io/yaml does it, with positions and strictness.

* YAML 1.1 scalars (PyYAML's SafeLoader resolvers, like go-yaml v2), except that timestamps stay
  strings (they are strings once converted to JSON);
* a duplicate key in a mapping is an error (kube-scheduler decodes its config strictly);
* merge keys (``<<``) are honoured;
* the file must hold exactly one document.

Every node's 1-based line is recorded under its field path so errors can point at it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode

from ._types import KIND, ConfigError


class _Loader(yaml.SafeLoader):
    """SafeLoader whose timestamps stay strings."""


_Loader.add_constructor(
    "tag:yaml.org,2002:timestamp",
    _Loader.construct_yaml_str,  # type: ignore[type-var]
)


def join_key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def join_index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def parse_document(text: str, source: str | None) -> tuple[Any, dict[str, int]]:
    """The single YAML document in ``text`` as plain Python data, and ``{path: line}``."""
    try:
        loader = _Loader(text)
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
    """Composed YAML nodes to plain data, recording each path's line."""

    def __init__(self, loader: _Loader, source: str | None) -> None:
        self.loader = loader
        self.source = source
        self.positions: dict[str, int] = {}
        self.merged_counts: dict[int, int] = {}
        self.active: set[int] = set()

    def convert(self, node: Node, path: str) -> Any:
        self.positions.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, ScalarNode):
            return self.loader.construct_object(node, deep=True)
        if id(node) in self.active:
            raise ConfigError(
                self.source,
                path,
                "recursive YAML alias: a node contains itself",
                line=node.start_mark.line + 1,
            )
        self.active.add(id(node))
        try:
            if isinstance(node, MappingNode):
                return self._mapping(node, path)
            return [self.convert(item, join_index(path, i)) for i, item in enumerate(node.value)]
        finally:
            self.active.discard(id(node))

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
            key = _key_text(self.loader.construct_object(key_node, deep=True))
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
                    f'duplicate field "{key}" (first set on line {first_line[key]})',
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


def plain_data(data: Any, path: str = "", source: str | None = None) -> Any:
    """A deep copy of in-memory data with only dict/list/scalars (keys must be strings)."""
    if isinstance(data, Mapping):
        out: dict[str, Any] = {}
        for key, value in data.items():
            if not isinstance(key, str):
                raise ConfigError(
                    source, path, f"field names must be strings, got {type(key).__name__}"
                )
            out[key] = plain_data(value, join_key(path, key), source)
        return out
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes, bytearray)):
        return [plain_data(item, join_index(path, i), source) for i, item in enumerate(data)]
    return data
