"""Bad cluster files, each refused with one line (``kubesched: error: ...``, exit 2) or
turned into an ``Error`` for the one pod it concerns. Files that once crashed the process
(a 50,000-level nesting segfaulted libyaml's composer; an alias bomb took gigabytes) run in
a subprocess, so that a crash fails the test instead of killing pytest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.runtime.cli import main
from kubesched.runtime.cluster.manifests import ManifestError, load_manifests

NODE = 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}\n'
POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"


def _billion_laughs() -> str:
    """The 708-byte alias bomb of the issue: 9 levels of 9 aliases (9**9 strings)."""
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        text += f"{cur}: &{cur} [{','.join(['*' + prev] * 9)}]\n"
    return text + "\n" * (708 - len(text))


# file text -> the one line, FILE standing for the path
REFUSED = {
    "flow-deep": ("[" * 50_000 + "]" * 50_000 + "\n", "FILE:1:101: nested deeper than 100 levels"),
    "flow-map-deep": ("{a: " * 50_000 + "}" * 50_000 + "\n", "FILE:1:401: nested deeper than 100 levels"),
    "block-deep": ("- " * 50_000 + "x\n", "FILE:1:201: nested deeper than 100 levels"),
    "indent-deep": ("".join(" " * i + "a:\n" for i in range(150)) + " " * 150 + "b\n", "FILE:101:101: nested deeper than 100 levels"),
    "alias-deep": ("a: &a " + "[" * 60 + "]" * 60 + "\nb: " + "[" * 50 + "*a" + "]" * 50 + "\n", 'FILE:2:54: nested deeper than 100 levels (through alias "*a")'),
    "alias-bomb": (_billion_laughs(), "FILE:7:8: document contains excessive aliasing"),
    "alias-loop": (POD + "spec: &s {x: [*s]}\n", 'FILE:4:15: alias "*s" is inside the node it names'),
    "duplicate-spec": (NODE + "---\n" + POD + "spec: {containers: []}\nspec: {nodeName: n1}\n", 'FILE:10:1: document 2: duplicate key "spec" (first at line 9)'),
    "duplicate-with-merge": (POD + "spec:\n  base: &b {x: 1}\n  m:\n    <<: *b\n    y: 1\n    y: 2\n", 'FILE:9:5: document 1: duplicate key "y" (first at line 8)'),
    "metadata-list": ("apiVersion: v1\nkind: Pod\nmetadata: [p]\n", "FILE: document 1 (Pod <no name>): metadata: expected a mapping, got a list"),
    "name-number": ("apiVersion: v1\nkind: Pod\nmetadata: {name: 5}\n", "FILE: document 1 (Pod 5): metadata.name: expected a string, got an integer"),
    "list-items": ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "FILE: document 1 (List <no name>): items: expected a list, got a mapping"),
    "tag-int": (POD + "spec: {priority: !!int a}\n", 'FILE:4:18: malformed YAML: cannot construct !!int from "a" (ValueError)'),
    "tag-int-empty": (POD + "spec: {priority: !!int ''}\n", 'FILE:4:18: malformed YAML: cannot construct !!int from "" (IndexError)'),
    "node-spec-bool": ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: true\n", "FILE: document 1 (Node n): spec: expected a mapping, got a boolean"),
    "name-binary": ("apiVersion: v1\nkind: Pod\nmetadata: {name: !!binary aGk=}\n", "FILE: document 1 (Pod b'hi'): metadata.name: expected a string, got binary data"),
    "namespace-set": ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: !!set {a}}\n", "FILE: document 1 (Pod {'a'}/p): metadata.namespace: expected a string, got a set"),
    "document-list": ("- a\n", "FILE: document 1: expected a Kubernetes object (a mapping), got a list"),
    "kind-typo": ("apiVersion: v1\nkind: nodes\nmetadata: {name: n}\n", 'FILE: document 1 (nodes n): kind: unknown kind "nodes" in v1; did you mean "Node"?'),
    "kind-escape": ("apiVersion: v1\nkind: \"Nod\\e[2J\"\nmetadata: {name: n}\n", 'FILE: document 1 (Nod\\x1b[2J n): kind: unknown kind "Nod\\x1b[2J" in v1'),
}


def _simulate(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubesched.runtime.cli", "simulate", str(path)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("case", ["flow-deep", "flow-map-deep", "block-deep", "alias-bomb"])
def test_files_that_crashed_the_process_are_one_line_in_a_subprocess(tmp_path: Path, case: str) -> None:
    text, line = REFUSED[case]
    p = tmp_path / "c.yaml"
    p.write_text(text)
    if case == "alias-bomb":
        assert p.stat().st_size == 708
    r = _simulate(p)
    assert (r.returncode, r.stdout, r.stderr.replace(str(p), "FILE")) == (2, "", f"kubesched: error: {line}\n")


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_file_is_one_line(tmp_path: Path, case: str) -> None:
    text, line = REFUSED[case]
    p = tmp_path / "c.yaml"
    p.write_text(text)
    with pytest.raises(ManifestError) as ei:
        load_manifests(p)
    assert str(ei.value).replace(str(p), "FILE") == line


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    p = tmp_path / "c.yaml"
    p.write_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n")
    with pytest.raises(ManifestError) as ei:
        load_manifests(p)
    assert str(ei.value).replace(str(p), "FILE") == "FILE: not UTF-8 text (byte 42)"


# a pod the cluster refuses: an Error for that pod alone, naming file, document and field
POD_ERRORS = {
    "spec: [1]\n": "spec: expected a mapping, got a list",
    'spec: "nginx"\n': "spec: expected a mapping, got a string",
    "spec: {containers: []}\nstatus: [x]\n": "status: expected a mapping, got a list",
    "spec: {schedulerName: 5, containers: []}\n": "spec.schedulerName: expected a string, got an integer (5)",
    "spec: {nodeName: [n1], containers: []}\n": "spec.nodeName: expected a string, got a list (['n1'])",
}


@pytest.mark.parametrize(("spec", "message"), sorted(POD_ERRORS.items()))
def test_a_pod_of_a_bad_shape_is_an_error_for_that_pod(tmp_path: Path, spec: str, message: str) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(NODE + "---\n" + POD + spec + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ok}\nspec: {containers: [{name: c, image: i}]}\n")
    result = CliRunner().invoke(main, ["simulate", str(p), "-o", "json"], env={"KUBESCHED_LOAD_PLUGINS": ""})
    assert result.exit_code == 0, result.output
    rows = [(r["name"], r["status"], r["message"].replace(str(p), "FILE")) for r in json.loads(result.stdout)["pods"]]
    assert rows == [("p", "Error", f"FILE: document 2 (Pod p): {message}"), ("ok", "Scheduled", "")]


@pytest.mark.parametrize(("metadata", "message"), [
    ("{name: p, annotations: {deep: {a: {b: c}}}}", "metadata.annotations[deep]: expected a string, got a mapping"),
    ("{name: p, annotations: [a]}", "metadata.annotations: expected a mapping of strings, got a list"),
    ("{name: p, labels: {app: 5}}", "metadata.labels[app]: expected a string, got an integer"),
    ("{name: p, labels: {5: app}}", "metadata.labels: key 5: expected a string, got an integer"),
])
def test_labels_and_annotations_are_strings(tmp_path: Path, metadata: str, message: str) -> None:
    p = tmp_path / "c.yaml"
    p.write_text(NODE + f"---\napiVersion: v1\nkind: Pod\nmetadata: {metadata}\nspec: {{containers: [{{name: c, image: i}}]}}\n")
    result = CliRunner().invoke(main, ["simulate", str(p), "-o", "json"], env={"KUBESCHED_LOAD_PLUGINS": ""})
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["pods"]
    assert (row["status"], row["message"].replace(str(p), "FILE")) == ("Error", f"FILE: document 2 (Pod p): {message}")
