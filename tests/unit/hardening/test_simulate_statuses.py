"""``kubesched simulate`` accounts for every pod of the file: one of each status, in the table,
the JSON report and the summary; ``kubesched explain`` says the same of each pod it does not
dry-run. Names from the file reach the terminal with their control characters escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.runtime.cli import main

CLUSTER = r"""apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim}
spec: {nodeName: n1, priority: 0, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: running}
spec: {nodeName: n1, priority: 100, containers: [{name: c, image: i, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: urgent}
spec: {priority: 100, containers: [{name: c, image: i, resources: {requests: {cpu: "3"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "10"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: shape}
spec: [1]
---
apiVersion: v1
kind: Pod
metadata: {name: typo}
spec: {schedulerName: defualt-scheduler, containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lost}
spec: {nodeName: n9, containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: gated}
spec: {schedulingGates: [{name: example.com/wait}], containers: [{name: c, image: i}]}
---
apiVersion: v1
kind: Pod
metadata: {name: "evil\x1b[2J", annotations: {note: {a: b}}}
spec: {containers: [{name: c, image: i}]}
"""

ENV = {"COLUMNS": "200", "KUBESCHED_LOAD_PLUGINS": "", "KUBESCHED_TRACE": None}

PREEMPTED = "Preempted by pod uid-pod-default-urgent-5 on node n1"
ROWS = [
    ("victim", "n1", "Deleted", f"deleted during the run, from node n1: {PREEMPTED}"),
    ("running", "n1", "Running", ""),
    ("urgent", "n1", "Scheduled", ""),
    ("big", None, "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
    ("shape", None, "Error", "FILE: document 6 (Pod shape): spec: expected a mapping, got a list"),
    ("typo", None, "Ignored", 'schedulerName "defualt-scheduler" is not a profile of this scheduler ("default-scheduler"); did you mean "default-scheduler"?'),
    ("lost", "n9", "NodeNotFound", 'spec.nodeName: node "n9" is not in the cluster'),
    ("gated", None, "Gated", "Scheduling is blocked due to non-empty scheduling gates: example.com/wait"),
    ("evil\x1b[2J", None, "Error", "FILE: document 10 (Pod evil\\x1b[2J): metadata.annotations[note]: expected a string, got a mapping"),
]


@pytest.fixture
def cluster(tmp_path: Path) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(CLUSTER)
    return p


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_pod_has_a_status_in_json(cluster: Path) -> None:
    report = json.loads(_run("simulate", str(cluster), "-o", "json"))
    got = [(p["name"], p["node"], p["status"], p["message"].replace(str(cluster), "FILE")) for p in report["pods"]]
    assert got == ROWS
    assert report["summary"] == {
        "nodes": 1, "pods": 9, "scheduled": 1, "unschedulable": 1, "errors": 2, "running": 1, "gated": 1,
        "ignored": 1, "nodeNotFound": 1, "completed": 0, "deleted": 1, "pending": 0, "profiles": ["default-scheduler"],
    }


def test_the_table_and_its_summary(cluster: Path) -> None:
    out = _run("simulate", str(cluster)).replace(str(cluster), "FILE")
    assert "\x1b" not in out  # the name's escape sequence is shown, not sent to the terminal
    assert "| default/evil\\x1b[2J |" in out.replace("\u2502", "|")
    for name, _node, status, _msg in ROWS:
        assert any(f"default/{name}" in line and status in line for line in out.replace("\\x1b", "\x1b").splitlines())
    assert out.splitlines()[-1] == "9 pods on 1 node: 1 scheduled, 1 unschedulable, 2 errors, 1 running, 1 gated, 1 ignored, 1 node not found, 1 deleted"


@pytest.mark.parametrize(("pod", "line"), [
    ("typo", 'Ignored: schedulerName "defualt-scheduler" is not a profile of this scheduler ("default-scheduler"); did you mean "default-scheduler"?'),
    ("lost", 'NodeNotFound: spec.nodeName: node "n9" is not in the cluster'),
    ("gated", "Gated: Scheduling is blocked due to non-empty scheduling gates: example.com/wait"),
    ("shape", "Error: FILE: document 6 (Pod shape): spec: expected a mapping, got a list"),
])
def test_explain_says_what_simulate_says(cluster: Path, pod: str, line: str) -> None:
    out = _run("explain", pod, "--cluster", str(cluster)).replace(str(cluster), "FILE")
    assert out.splitlines()[-1] == line
    status = line.split(":")[0]
    ex = json.loads(_run("explain", pod, "--cluster", str(cluster), "-o", "json"))
    assert (ex["status"], ex["message"].replace(str(cluster), "FILE")) == (status, line[len(status) + 2:])


def test_explain_escapes_control_characters(cluster: Path) -> None:
    out = _run("explain", "evil\x1b[2J", "--cluster", str(cluster)).replace(str(cluster), "FILE")
    assert "\x1b" not in out
    assert out.splitlines() == [
        "default/evil\\x1b[2J (profile default-scheduler)",
        "Error: FILE: document 10 (Pod evil\\x1b[2J): metadata.annotations[note]: expected a string, got a mapping",
    ]


INVALID = r"""apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: bound}
spec: {nodeName: n1, containers: [{name: c, image: i, resources: {requests: {cpu: lots}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: pending}
spec: {containers: [{name: c, image: i, resources: {requests: {memory: 12x}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: team-a}
spec: {schedulerName: someone-else, containers: [{name: c, image: i, resources: {requests: {cpu: "-1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: whole}
spec: {containers: [{name: c, image: i, resources: {requests: {cpu: "4"}}}]}
"""

FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
INVALID_ROWS = [
    ("bound", None, "Error", f'FILE: document 2 (Pod bound): invalid pod spec: spec.containers[0].resources.requests.cpu: "lots": {FORMAT}'),
    ("pending", None, "Error", f'FILE: document 3 (Pod pending): invalid pod spec: spec.containers[0].resources.requests.memory: "12x": {FORMAT}'),
    ("other", None, "Error", 'FILE: document 4 (Pod team-a/other): invalid pod spec: spec.containers[0].resources.requests.cpu: Invalid value: "-1": must be greater than or equal to 0'),
    ("whole", "n1", "Scheduled", ""),
]


def test_a_pod_whose_spec_does_not_validate_is_an_error_naming_file_and_document(tmp_path: Path) -> None:
    """Bound to a node of the file (the scheduler leaves it out of its cache), pending, or
    another scheduler's: each is an Error naming the file, document and field, and the bound
    one counts on no node (the pod asking for the whole node is Scheduled)."""
    path = tmp_path / "c.yaml"
    path.write_text(INVALID)
    report = json.loads(_run("simulate", str(path), "-o", "json"))
    got = [(p["name"], p["node"], p["status"], p["message"].replace(str(path), "FILE")) for p in report["pods"]]
    assert got == INVALID_ROWS
    assert report["summary"]["errors"] == 3 and report["summary"]["running"] == 0 and report["summary"]["ignored"] == 0
    assert _run("simulate", str(path)).splitlines()[-1] == "4 pods on 1 node: 1 scheduled, 0 unschedulable, 3 errors"
    for name, _node, status, message in INVALID_ROWS[:3]:
        pod = f"team-a/{name}" if name == "other" else name
        ex = json.loads(_run("explain", pod, "--cluster", str(path), "-o", "json"))
        assert (ex["status"], ex["message"].replace(str(path), "FILE")) == (status, message)


def test_the_summary_line_says_one_in_the_singular() -> None:
    from kubesched.runtime.cli.simulate_cmd import summary_line

    assert summary_line({"pods": 1, "nodes": 1, "scheduled": 0, "unschedulable": 0, "errors": 1, "running": 1}) == "1 pod on 1 node: 0 scheduled, 0 unschedulable, 1 error, 1 running"
    assert summary_line({"pods": 0, "nodes": 2, "scheduled": 0, "unschedulable": 0, "errors": 0}) == "0 pods on 2 nodes: 0 scheduled, 0 unschedulable, 0 errors"


def test_a_pod_whose_binding_cycle_failed_is_never_scheduled(ks) -> None:
    """Bind stored the binding, then failed: the cluster has the pod on n1, and the binding
    cycle failed; the result is the Error, with the node, not Scheduled."""
    from kubesched.sdk import Code, Status, hookimpl

    class BindThenFail:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def bind(self, pod, node_name):
            self.handle.bind_pod(pod, node_name)
            return Status(Code.ERROR, "the apiserver answered 500 after storing the binding")

    r = ks.run({"B": BindThenFail}, {"bind": ["B"]}, ks.nodes(1) + [ks.pod("p")])
    res = r.result("p")
    assert (res.status, res.node, res.message) == ("Error", "n1", 'running Bind plugin "B": the apiserver answered 500 after storing the binding (yet the pod is bound to node n1)')
