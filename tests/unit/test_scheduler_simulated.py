"""The embedded simulated cluster: running pods, other schedulers, file order, bad pods, and
manifest errors."""

from __future__ import annotations

import textwrap

import pytest

from kubesched.runtime.cluster.simulated import ManifestError, SimulatedCluster, load_manifests
from kubesched.sdk import ObjectConflict, Pod, Status, hookimpl


class Fit:
    """A minimal NodeResourcesFit stand-in: cpu only, with kube-scheduler's reason."""

    @hookimpl
    def filter(self, pod, node_info):
        if node_info.requested.milli_cpu + pod.requests.milli_cpu > node_info.allocatable.milli_cpu:
            return Status.unschedulable("Insufficient cpu")


def test_pods_with_node_name_count_as_running(ks, calls):
    class Rec:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(
                (
                    node_info.name,
                    node_info.requested.milli_cpu,
                    sorted(p.name for p in node_info.pods),
                )
            )

    manifests = ks.nodes(2, cpu="2") + [
        ks.pod("running", cpu="1500m", node_name="n1"),
        ks.pod("new", cpu="1"),
    ]
    r = ks.run({"Fit": Fit, "Rec": Rec}, {"filter": ["Rec", "Fit"]}, manifests)
    assert ("n1", 1500, ["running"]) in calls
    assert r.result("new").node == "n2"
    # the running pod was never scheduled nor bound by us
    assert "running" not in r.bound()
    assert all(res.name != "running" or res.status == "Scheduled" for res in r.results.values())


def test_running_pods_of_other_schedulers_fill_nodes(ks):
    manifests = ks.nodes(1, cpu="2") + [
        ks.pod("theirs", cpu="2", node_name="n1", scheduler="default-scheduler"),
        ks.pod("mine", cpu="1"),
    ]
    r = ks.run({"Fit": Fit}, {"filter": ["Fit"]}, manifests)
    assert r.result("mine").status == "Unschedulable"
    assert r.result("mine").message == "0/1 nodes are available: 1 Insufficient cpu."


def test_pods_of_another_scheduler_name_are_not_scheduled(ks, calls):
    class Rec:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(pod.name)

    manifests = ks.nodes(1) + [ks.pod("other", scheduler="someone-else"), ks.pod("mine")]
    r = ks.run({"Rec": Rec}, {"filter": ["Rec"]}, manifests)
    assert "other" not in calls
    assert "other" not in r.bound()
    assert all(res.name != "other" for res in r.results.values())
    assert r.result("mine").status == "Scheduled"


def test_pods_without_creation_timestamp_are_created_in_file_order(ks, calls):
    class Rec:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(pod.name)

    # names deliberately not alphabetical: file order wins
    manifests = ks.nodes(1, cpu="2") + [
        ks.pod("zeta", cpu="1"),
        ks.pod("alpha", cpu="1"),
        ks.pod("mu", cpu="1"),
    ]
    r = ks.run({"Rec": Rec, "Fit": Fit}, {"filter": ["Rec", "Fit"]}, manifests)
    assert calls[:3] == ["zeta", "alpha", "mu"]
    assert r.result("zeta").status == "Scheduled"
    assert r.result("alpha").status == "Scheduled"
    mu = r.result("mu")
    assert mu.status == "Unschedulable"
    assert mu.message == "0/1 nodes are available: 1 Insufficient cpu."


def test_each_pod_sees_earlier_placements(ks, calls):
    class Spread:
        """Prefer the emptiest node."""

        @hookimpl
        def score(self, node_info):
            return max(0, 100 - 10 * len(node_info.pods))

    r = ks.run(
        {"Spread": Spread}, {"score": ["Spread"]}, ks.nodes(3) + [ks.pod(f"p{i}") for i in range(6)]
    )
    per_node: dict[str, int] = {}
    for n in r.placements().values():
        per_node[n] = per_node.get(n, 0) + 1
    assert per_node == {"n1": 2, "n2": 2, "n3": 2}


def test_priority_order_applies_among_pending_pods_with_creation_timestamp(ks, calls):
    class Rec:
        @hookimpl
        def filter(self, pod, node_info):
            calls.append(pod.name)

    T0 = "2024-01-01T00:00:00Z"
    manifests = ks.nodes(1) + [
        ks.pod("low", priority=1, created=T0),
        ks.pod("high", priority=5, created=T0),
    ]
    ks.run({"Rec": Rec}, {"filter": ["Rec"]}, manifests)
    assert calls == ["high", "low"]


def test_pod_with_invalid_quantity_is_error_with_field_path(ks):
    bad = ks.pod("bad")
    bad["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "12x"}}
    manifests = ks.nodes(1) + [ks.pod("before"), bad, ks.pod("after")]
    r = ks.run({"Fit": Fit}, {"filter": ["Fit"]}, manifests)
    res = r.result("bad")
    assert res.status == "Error"
    assert "spec.containers[0].resources.requests.cpu" in res.message
    assert "12x" in res.message
    assert r.result("before").status == "Scheduled"
    assert r.result("after").status == "Scheduled"
    assert "bad" not in r.bound()


def test_pod_with_invalid_limit_is_error(ks):
    bad = ks.pod("bad")
    bad["spec"]["containers"][0]["resources"] = {"limits": {"memory": "1.2.3Gi"}}
    r = ks.run({}, {}, ks.nodes(1) + [bad, ks.pod("good")])
    assert r.result("bad").status == "Error"
    assert "1.2.3Gi" in r.result("bad").message
    assert "spec.containers[0].resources.limits.memory" in r.result("bad").message
    assert r.result("good").status == "Scheduled"


def test_bind_twice_is_a_conflict(ks):
    r = ks.build({}, {}, ks.nodes(1) + [ks.pod("p", created="2024-01-01T00:00:00Z")])
    for m in r.cluster.manifests:
        r.cluster.store.create(m)
    pod = Pod(r.cluster.store.get("v1", "Pod", "p", "default"))
    r.cluster.bind(pod, "n1")
    with pytest.raises(ObjectConflict):
        r.cluster.bind(pod, "n1")
    assert r.cluster.binds == [("default/p", "n1")]


def test_empty_cluster_reports_no_nodes(ks):
    r = ks.run({}, {}, [ks.pod("p")])
    assert r.result("p").status != "Scheduled"
    assert "no nodes available" in r.result("p").message


def test_file_order_pods_meet_a_waiting_gang_member(ks):
    """File-order pods arrive before timers expire (like kubectl apply): a pod waiting at Permit
    sees the next pod of the file."""

    class Gang:
        def __init__(self, handle):
            self.handle = handle

        @hookimpl
        def permit(self, pod):
            if pod.name == "a":
                return Status.wait(), 60
            wp = self.handle.get_waiting_pod("a")
            if wp is not None:
                wp.allow("Gang")

    r = ks.run({"Gang": Gang}, {"permit": ["Gang"]}, ks.nodes(2) + [ks.pod("a"), ks.pod("b")])
    assert r.result("a").status == "Scheduled"


# manifests -----------------------------------------------------------------------------------------


def _write(tmp_path, text: str, name: str = "cluster.yaml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""


def test_load_manifests_reads_multi_document_yaml_and_lists(tmp_path):
    p = _write(
        tmp_path,
        NODE
        + """\
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec: {containers: [{name: c, image: x}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: b, namespace: team}
  spec: {containers: [{name: c, image: x}]}
---
""",
    )
    objs = load_manifests(p)
    assert [(o["kind"], o["metadata"]["name"]) for o in objs] == [
        ("Node", "n1"),
        ("Pod", "a"),
        ("Pod", "b"),
    ]


def _manifest_error(tmp_path, text: str) -> str:
    p = _write(tmp_path, text)
    with pytest.raises(ManifestError) as ei:
        load_manifests(p)
    msg = str(ei.value)
    assert "\n" not in msg
    assert str(p) in msg
    return msg


def test_malformed_yaml_is_a_one_line_error_with_position(tmp_path):
    msg = _manifest_error(
        tmp_path, NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n"
    )
    assert "malformed YAML" in msg
    assert ":" in msg.split(str(tmp_path))[1]


def test_unknown_kind_is_an_error_naming_document_and_field(tmp_path):
    msg = _manifest_error(tmp_path, NODE + "---\napiVersion: v1\nkind: Nod\nmetadata: {name: n2}\n")
    assert "document 2" in msg
    assert "kind" in msg and '"Nod"' in msg
    assert 'did you mean "Node"' in msg


def test_missing_name_is_an_error(tmp_path):
    msg = _manifest_error(
        tmp_path, NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: {namespace: x}\nspec: {}\n"
    )
    assert "document 2" in msg
    assert "metadata.name" in msg


def test_duplicate_objects_are_an_error(tmp_path):
    msg = _manifest_error(tmp_path, NODE + "---\n" + NODE)
    assert "document 2" in msg
    assert "duplicate" in msg
    assert "document 1" in msg
    assert "n1" in msg


def test_same_name_in_other_namespace_is_not_duplicate(tmp_path):
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: {ns}}}\nspec: {{containers: [{{name: c, image: x}}]}}\n"
    p = _write(tmp_path, pod.format(ns="a") + "---\n" + pod.format(ns="b"))
    assert len(load_manifests(p)) == 2


def test_missing_kind_or_api_version_is_an_error(tmp_path):
    msg = _manifest_error(tmp_path, "apiVersion: v1\nmetadata: {name: x}\n")
    assert "kind" in msg
    msg = _manifest_error(tmp_path, "kind: Node\nmetadata: {name: x}\n")
    assert "apiVersion" in msg


def test_invalid_node_quantity_is_a_manifest_error(tmp_path):
    msg = _manifest_error(
        tmp_path,
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: 4x}}\n",
    )
    assert "document 1" in msg
    assert "4x" in msg


def test_unreadable_file_is_a_manifest_error(tmp_path):
    with pytest.raises(ManifestError) as ei:
        load_manifests(tmp_path / "missing.yaml")
    assert "missing.yaml" in str(ei.value)


def test_simulated_cluster_from_loaded_manifests(tmp_path, ks):
    p = _write(
        tmp_path,
        NODE
        + """\
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  schedulerName: test
  containers: [{name: c, image: nginx, resources: {requests: {cpu: 500m}}}]
""",
    )
    from kubesched.runtime.scheduler import Scheduler

    reg = ks.registry()
    cfg = ks.load_cfg({}, reg)
    cluster = SimulatedCluster(load_manifests(p), source=str(p))
    sched = Scheduler(cfg, reg, cluster, simulated=True, seed=1)
    cluster.run(sched)
    (res,) = sched.results.values()
    assert (res.name, res.node, res.status) == ("web", "n1", "Scheduled")
    assert sched.cache.node_info("n1").requested.milli_cpu == 500


def test_binding_cycle_gets_the_pod_object_reserve_and_permit_got(ks):
    """One assumed Pod per cycle: the cache, Reserve, Permit, PreBind, Bind and PostBind share it."""
    seen: dict[str, list[Pod]] = {}

    class Keep:
        def __init__(self, handle):
            self.handle = handle

        def _keep(self, hook, pod):
            seen.setdefault(hook, []).append(pod)

        @hookimpl
        def reserve(self, pod, node_name):
            self._keep("reserve", pod)

        @hookimpl
        def unreserve(self, pod, node_name):
            self._keep("unreserve", pod)

        @hookimpl
        def permit(self, pod, node_name):
            self._keep("permit", pod)

        @hookimpl
        def pre_bind(self, pod, node_name):
            self._keep("pre_bind", pod)

        @hookimpl
        def bind(self, pod, node_name):
            self._keep("bind", pod)
            return Status.skip()

        @hookimpl
        def post_bind(self, pod, node_name):
            self._keep("post_bind", pod)

    points = {p: ["Keep"] for p in ("reserve", "permit", "preBind", "postBind")}
    points["bind"] = ["Keep", "DefaultBinder"]
    r = ks.run({"Keep": Keep}, points, ks.nodes(1) + [ks.pod("p")])
    assert r.result("p").status == "Scheduled"
    assert sorted(seen) == ["bind", "permit", "post_bind", "pre_bind", "reserve"]
    (reserved,) = seen["reserve"]
    assert reserved.node_name == "n1"
    for hook in ("permit", "pre_bind", "bind", "post_bind"):
        (got,) = seen[hook]
        assert got is reserved, hook
