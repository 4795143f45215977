"""``load_manifests`` builds its documents directly (``manifests._Loader``): the objects are
those PyYAML's safe loader builds, and what the direct pass leaves to PyYAML (merge keys,
explicit tags, unhashable keys) keeps PyYAML's results and errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kubesched.runtime.cluster.manifests import ManifestError, _Loader, load_manifests

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DOCS = """\
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {zone: a, "quoted": 'yes', plain: yes, empty: "", nothing: ~, n: 012, h: 0x1f, f: .5, inf: .inf, t: 2001-12-14t21:59:43.10-05:00}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}, capacity: {cpu: 4}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, labels: &labels {a: "1", b: 1}, annotations: {a: !!str 12, b: !!int "7", c: !!float "1", d: !!binary aGVsbG8=}}
spec:
  base: &base {x: 1, y: [1, 2, {z: [3]}]}
  merged:
    <<: *base
    y: 9
  seq: [*base, *base]
  labels: *labels
  dup: 1
  dup: 2
  ? 80
  : port
  ? null
  : none
  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
---
# an empty document
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: p2}, spec: {containers: []}}
"""


def test_documents_are_those_of_pyyaml_safe_loader() -> None:
    want = list(yaml.load_all(DOCS, Loader=SAFE))
    got = list(yaml.load_all(DOCS, Loader=_Loader))
    assert repr(got) == repr(want)  # values, types and key order
    # an alias is the same object, as PyYAML builds it
    assert got[1]["spec"]["seq"][0] is got[1]["spec"]["seq"][1] is got[1]["spec"]["base"]
    assert got[1]["spec"]["labels"] is got[1]["metadata"]["labels"]


def test_recursive_aliases_are_built_as_pyyaml_builds_them() -> None:
    got = yaml.load("a: &m {k: *m}\nb: &s [*s]\n", Loader=_Loader)
    assert got["a"]["k"] is got["a"]
    assert got["b"][0] is got["b"]


def _load_error(tmp_path: Path, text: str) -> str:
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(ManifestError) as ei:
        load_manifests(p)
    return str(ei.value).replace(str(p), "FILE")


def test_an_unhashable_key_is_pyyamls_error(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  ok: 1\n  ? [a, b]\n  : x\n"
    assert _load_error(tmp_path, text) == "FILE:6:5: malformed YAML: found unhashable key"


def test_an_unknown_tag_is_pyyamls_error(tmp_path: Path) -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: !custom {a: 1}\n"
    assert _load_error(tmp_path, text) == "FILE:4:7: malformed YAML: could not determine a constructor for the tag '!custom'"


def test_load_manifests_of_a_file_with_aliases_and_merge_keys(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(DOCS.replace("  dup: 1\n", ""))  # a duplicate key is refused (below)
    objs = load_manifests(p)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [("Node", "n1"), ("Pod", "p1"), ("Pod", "p2")]
    assert objs[1]["spec"]["merged"] == {"x": 1, "y": 9}
    assert objs[1]["spec"]["dup"] == 2 and objs[1]["spec"][80] == "port" and objs[1]["spec"][None] == "none"
    assert objs[1]["spec"]["schedulerName"] == "default-scheduler"


def test_load_manifests_refuses_a_duplicate_key(tmp_path: Path) -> None:
    """PyYAML keeps the last of two equal keys; a cluster file with one is an error."""
    assert _load_error(tmp_path, DOCS) == 'FILE:19:3: document 2: duplicate key "dup" (first at line 18)'
