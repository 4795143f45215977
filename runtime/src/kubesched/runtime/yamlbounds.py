"""The bounds both YAML readers keep (the config file's, ``config._yaml``, and the cluster file's,
``cluster.manifests``): how deep a document may nest, go-yaml's alias-expansion budget, and the
short form of a YAML tag and of a very deep field path in their messages."""

from __future__ import annotations

import re

__all__ = ["MAX_DEPTH", "excessive_aliasing", "short_path", "short_tag"]

#: how deep collections may nest (the document itself is level 1). go-yaml stops at 10,000;
#: a KubeSchedulerConfiguration needs about a dozen levels, a Kubernetes object ~15, and
#: Python's recursion (the runtime copies objects recursively, ~3 frames per level) must never
#: be the limit.
MAX_DEPTH = 100

# go-yaml's alias-expansion budget (go.yaml.in/yaml/v2 decode.go allowedAliasRatio): up to 99 %
# of a document's decoded values may come from aliases below 400,000 values, scaling down to 10 %
# at 4,000,000; checked once more than 100 values came from aliases and 1,000 were decoded.
_ALIAS_RATIO_RANGE_LOW = 400_000
_ALIAS_RATIO_RANGE_HIGH = 4_000_000

_CORE = "tag:yaml.org,2002:"

#: a deep path is shown by its first this many segments and its length
_PATH_SEGMENTS = 6
_SEGMENT = re.compile(r"[.\[]")


def allowed_alias_ratio(decodes: int) -> float:
    if decodes <= _ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    span = _ALIAS_RATIO_RANGE_HIGH - _ALIAS_RATIO_RANGE_LOW
    return 0.99 - 0.89 * ((decodes - _ALIAS_RATIO_RANGE_LOW) / span)


def excessive_aliasing(aliased: int, decoded: int) -> bool:
    """go-yaml's ``document contains excessive aliasing``: ``aliased`` of the ``decoded``
    values so far came from aliases."""
    return aliased > 100 and decoded > 1000 and aliased / decoded > allowed_alias_ratio(decoded)


def short_tag(tag: str) -> str:
    """``!!int`` for ``tag:yaml.org,2002:int`` (other tags as written)."""
    return f"!!{tag[len(_CORE):]}" if tag.startswith(_CORE) else tag


def short_path(path: str) -> str:
    """A field path as a message shows it: a deep one (``a[0][0]...``, 99 indexes) cut after
    its first few segments, with how many it has (``a[0][0][0][0][0]... (100 levels)``)."""
    bounds = [m.start() for m in _SEGMENT.finditer(path) if m.start() > 0]
    if len(bounds) < 2 * _PATH_SEGMENTS:
        return path
    return f"{path[:bounds[_PATH_SEGMENTS - 1]]}... ({len(bounds) + 1} levels)"
