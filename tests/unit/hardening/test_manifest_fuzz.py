"""Fuzz of the cluster-file loader and the simulated cluster: random YAML-ish text and random
JSON-like documents give a ManifestError (one line) or a report where each pod has a status;
never another exception (bounded: a few seconds per test)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.runtime.cli.simulate_cmd import simulate
from kubesched.runtime.cluster.manifests import ManifestError, load_manifests
from kubesched.runtime.scheduler.results import STATUSES
from kubesched.sdk import Pod

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

_TOKENS = ["[", "]", "{", "}", ", ", ": ", "- ", "? ", "\n", "  ", "&a ", "*a", "&b ", "*b", "<<: ", "!!str ", "!!int ", "---\n", "...\n",
           "#c\n", '"', "'", "|\n", ">\n", "a", "spec", "kind: Pod", "apiVersion: v1", "metadata:", "name: p", "\t", "\x1b", "1e400", "~", "\\"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=False), st.text(max_size=8))
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["a", "spec", "metadata", "name", "containers", "nodeName", "schedulerName", "labels", "annotations", "resources", "requests", "cpu"]), inner, max_size=4)), max_leaves=20)


def _check(path: Path) -> None:
    try:
        objs = load_manifests(path)
    except ManifestError as e:
        assert "\n" not in str(e)
        return
    try:
        report = simulate(str(path))
    except ManifestError as e:
        assert "\n" not in str(e)
        return
    pods = [o for o in objs if o.get("kind") == "Pod"]
    assert len(report["pods"]) == len(pods)
    assert all(p["status"] in STATUSES and p["status"] != "Pending" for p in report["pods"])
    summary = report["summary"]
    keys = {"Scheduled": "scheduled", "Unschedulable": "unschedulable", "Error": "errors"}
    counts = {s: summary[keys.get(s, s[0].lower() + s[1:])] for s in STATUSES}
    assert summary["pods"] == sum(counts.values())
    assert counts == {s: sum(1 for p in report["pods"] if p["status"] == s) for s in STATUSES}
    by_name = {(str((o.get("metadata") or {}).get("namespace") or "default"), str((o.get("metadata") or {}).get("name"))): o for o in pods}
    for p in report["pods"]:
        if p["status"] == "Running":
            Pod(by_name[(p["namespace"], p["name"])]).validate()  # raises if a Running pod does not validate


@SETTINGS
@given(st.lists(st.sampled_from(_TOKENS), max_size=60))
def test_random_yamlish_text(tmp_path_factory, tokens: list[str]) -> None:
    p = tmp_path_factory.mktemp("fuzz") / "c.yaml"
    p.write_text("".join(tokens))
    _check(p)


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["Pod", "Node"]), documents, documents, documents), min_size=1, max_size=4))
def test_random_documents(tmp_path_factory, docs: list[tuple[str, object, object, object]]) -> None:
    p = tmp_path_factory.mktemp("fuzz") / "c.yaml"
    text = []
    for i, (kind, md, spec, status) in enumerate(docs):
        meta = md if isinstance(md, dict) else {"name": f"o{i}"}
        meta.setdefault("name", f"o{i}")
        text.append(json.dumps({"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": spec, "status": status}))
    p.write_text("\n---\n".join(text))
    _check(p)
