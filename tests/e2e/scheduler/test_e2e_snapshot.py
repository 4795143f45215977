"""``kubesched snapshot`` on a real API server, round trip: snapshot a cluster with pending pods,
simulate the snapshot, then let the live kubesched schedule them: the same placements.

The cluster is built so that the decisions cannot depend on chance: pending pods of distinct
priorities (one scheduling order), and the simulated placements are the same under several
seeds (no score ties), so the live scheduler's random tie-break never comes into play.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from e2e_sched import (
    GROUP_LABEL,
    Kubesched,
    make_group_nodes,
    make_pod,
    make_pods,
    scheduler_config,
    wait_bound,
)
from kubernetes import client

from kubesched.runtime.cli import main, required_kinds
from kubesched.runtime.cli.app import load_config_file, registry
from kubesched.runtime.cli.simulate_cmd import simulate
from kubesched.runtime.cluster.kubernetes import KubeClient
from kubesched.runtime.sim.snapshot import read_cluster

#: (name, cpu, memory, priority) of the pods pending when the snapshot is taken
PENDING = [
    ("p-a", "1", "1Gi", 50),
    ("p-b", "700m", "2Gi", 40),
    ("p-c", "1500m", "512Mi", 30),
    ("p-d", "300m", "1500Mi", 20),
    ("p-e", "1200m", "1Gi", 10),
]


@pytest.fixture
def priority_classes(kube_client: Any, test_id: str) -> Iterator[dict[int, str]]:
    sched = client.SchedulingV1Api(kube_client)
    names = {prio: f"snap-{prio}-{test_id}" for _, _, _, prio in PENDING}
    for prio, name in names.items():
        body: Any = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": prio}
        sched.create_priority_class(body)
    yield names
    for name in names.values():
        try:
            sched.delete_priority_class(name)
        except client.ApiException as e:
            if e.status != 404:
                raise


class RecordingClient(KubeClient):
    """The project's client, remembering the path of every request it sends."""

    paths: list[str]

    def request(self, method: str, path: str, **kw: Any) -> Any:
        self.paths = [*getattr(self, "paths", []), f"{method} {path}"]
        return super().request(method, path, **kw)


def test_snapshot_round_trip(
    control_plane: Any,
    core_v1: Any,
    namespace: str,
    test_id: str,
    tmp_path: Path,
    priority_classes: dict[int, str],
    run_kubesched: Callable[..., Kubesched],
) -> None:
    group = f"snap-{test_id}"
    name = f"kubesched-{test_id}"
    n0 = make_group_nodes(core_v1, f"{group}-a", 1, cpu="2", memory="4Gi")[0]
    n1 = make_group_nodes(core_v1, f"{group}-b", 1, cpu="4", memory="6Gi")[0]
    n2 = make_group_nodes(core_v1, f"{group}-c", 1, cpu="6", memory="10Gi")[0]
    for n in (n0, n1, n2):  # one group label for the pods' nodeSelector
        core_v1.patch_node(n, {"metadata": {"labels": {GROUP_LABEL: group}}})
    # pods already running (bound directly), and a Secret the snapshot must not read
    make_pod(core_v1, "run-1", namespace, cpu="2", memory="1Gi", node_name=n2)
    make_pod(core_v1, "run-2", namespace, cpu="500m", memory="3Gi", node_name=n1)
    core_v1.create_namespaced_secret(namespace, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}})
    for pod, cpu, memory, prio in PENDING:
        make_pods(
            core_v1,
            [pod],
            namespace,
            cpu=cpu,
            memory=memory,
            scheduler_name=name,
            node_selector={GROUP_LABEL: group},
            spec_overrides={"priorityClassName": priority_classes[prio]},
        )

    cfg = scheduler_config([{"schedulerName": name}], percentageOfNodesToScore=100)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg))

    # the snapshot (no scheduler of this profile runs yet: the pods are pending)
    out = tmp_path / "workload.yaml"
    r = CliRunner().invoke(main, ["snapshot", "--kubeconfig", str(control_plane.kubeconfig), "--config", str(config), "-o", str(out)])
    assert r.exit_code == 0, r.output
    objs = list(yaml.safe_load_all(out.read_text()))
    kinds = {o["kind"] for o in objs}
    assert "Secret" not in kinds
    assert {"Node", "Pod", "Namespace"} <= kinds
    assert not [o for o in objs if "managedFields" in o["metadata"] or "resourceVersion" in o["metadata"]]
    ours = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Pod" and o["metadata"].get("namespace") == namespace}
    assert set(ours) == {"run-1", "run-2", *(p for p, *_ in PENDING)}
    for pod, *_ in PENDING:
        md = ours[pod]["metadata"]
        assert md["uid"] and md["creationTimestamp"]
        assert "nodeName" not in ours[pod]["spec"]
    assert ours["run-1"]["spec"]["nodeName"] == n2

    # simulated placements: the same under every seed (no ties to break)
    sims = []
    for seed in (1, 2, 3, 4, 5):
        rep = simulate(str(out), str(config), seed=seed)
        sims.append({p["name"]: (p["status"], p.get("node")) for p in rep["pods"] if p.get("namespace", namespace) == namespace and p["name"].startswith("p-")})
    assert all(s == sims[0] for s in sims), sims
    simulated = sims[0]
    assert set(simulated) == {p for p, *_ in PENDING}
    assert all(status == "Scheduled" for status, _ in simulated.values()), simulated
    assert len({node for _, node in simulated.values()}) > 1  # the decisions are not all the same node

    # the live scheduler places them where the simulation did
    run_kubesched(cfg)
    live = wait_bound(core_v1, namespace, [p for p, *_ in PENDING], timeout=120)
    assert live == {p: node for p, (_, node) in simulated.items()}


def test_snapshot_never_requests_secrets(control_plane: Any, core_v1: Any, namespace: str) -> None:
    """Even asked for Secrets (as a plugin watching them would), the snapshot lists none; every
    request is a GET."""
    core_v1.create_namespaced_secret(namespace, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "v"}})
    reg = registry()
    kinds = [*required_kinds(load_config_file(None, reg), reg), "Secret"]
    kc = RecordingClient(str(control_plane.kubeconfig))
    objs = read_cluster(kc, kinds)
    assert kc.paths
    assert not [p for p in kc.paths if "secrets" in p], kc.paths
    assert {p.split(" ")[0] for p in kc.paths} == {"GET"}
    assert "Secret" not in {o["kind"] for o in objs}
    assert any(o["kind"] == "Namespace" and o["metadata"]["name"] == namespace for o in objs)
