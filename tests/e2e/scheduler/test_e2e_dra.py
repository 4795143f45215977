"""Dynamic resource allocation on the real control plane: kube-scheduler v1.36.3 and kubesched,
one after the other, each on its own copy of the same DRA objects, allocate the same devices on
the same nodes, write the same reservedFor and finalizers, and give the same FailedScheduling
message for a claim that cannot be satisfied. kubesched runs with only the chart's RBAC (the
rendered runtime/deploy/manifests/kubesched.yaml) and no request of it is refused.

The DeviceClasses and ResourceSlices are made by hand (no driver runs); the test is the
resourceclaim controller for the pod whose claim comes from a template. Each copy has two nodes
whose pool is named after the node, so one copy's allocations leave the other's devices free;
both copies' nodes exist before either scheduler starts, so the node counts in the messages are
the same.

The steps, in order (each waits for its outcome; the devices left free decide the next):

1. ``cel``: ExactCount with a CEL selector on an attribute and a capacity (an a100 with at least
   64Gi): only n0/g1 matches.
2. ``pair``: a gpu and a nic with matchAttribute numa: n0's free gpu is on numa 0 and its nic on
   numa 1; on n1 the allocator backtracks from g0 (numa 0) to g1 (numa 1).
3. ``prio``: firstAvailable [a100, any gpu]: both nodes fit, n0 with the first subrequest, n1
   with the second; DynamicResources' score picks n0.
4. ``templated``: a claim from a ResourceClaimTemplate: n1/g0.
5. ``shared-a``, ``shared-b``: one claim for two pods: n1/g2, reserved for both in order.
6. ``last-a``, ``last-b``: two pods, each with its own claim, for the last free gpu (n1/g3).
7. ``h100``: no device matches; ``no-class``: the claim's device class does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_dra import (
    DELETE_PROTECTION,
    DraApi,
    claim_pod,
    claim_spec,
    claim_template,
    comparable_claim,
    device,
    device_class,
    devices_of,
    exactly,
    first_available,
    instantiate_templates,
    node_slice,
    resource_claim,
)
from e2e_rbac import (
    apply_documents,
    denied_lines,
    load_manifest,
    one,
    rbac_documents,
    request_token,
    sa_user,
    write_token_kubeconfig,
)
from e2e_sched import (
    GROUP_LABEL,
    Kubesched,
    events_by_pod,
    make_group_nodes,
    scheduler_config,
    wait_bound,
    wait_event,
)
from helpers import wait_for

DRIVER = "gpu.e2e.kubesched.io"
MISSING_CLASS = "e2e-missing-class"

#: the devices of each copy's two nodes: (name, model, memory, numa) per role
NODE_DEVICES = {
    "n00": [
        device("g0", {"role": "gpu", "model": "a100", "numa": 0}, {"memory": "40Gi"}),
        device("g1", {"role": "gpu", "model": "a100", "numa": 1}, {"memory": "80Gi"}),
        device("nic0", {"role": "nic", "numa": 1}),
    ],
    "n01": [
        device("g0", {"role": "gpu", "model": "t4", "numa": 0}, {"memory": "16Gi"}),
        device("g1", {"role": "gpu", "model": "t4", "numa": 1}, {"memory": "16Gi"}),
        device("g2", {"role": "gpu", "model": "t4", "numa": 0}, {"memory": "16Gi"}),
        device("g3", {"role": "gpu", "model": "t4", "numa": 0}, {"memory": "16Gi"}),
        device("nic0", {"role": "nic", "numa": 1}),
    ],
}

BIG_A100 = (
    f'device.attributes["{DRIVER}"].model == "a100" && '
    f'device.capacity["{DRIVER}"].memory.compareTo(quantity("64Gi")) >= 0'
)


@dataclass
class Outcome:
    """One scheduler's results on its copy, with the copy's names replaced by ``P``."""

    nodes: dict[str, str | None] = field(default_factory=dict)  # pod -> node
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)  # claim key -> comparable
    messages: dict[str, str] = field(default_factory=dict)  # pod -> first FailedScheduling note
    raw_claims: dict[str, dict[str, Any]] = field(default_factory=dict)


class Copy:
    """One copy of the DRA objects: two nodes of group ``prefix``, their slices, a namespace."""

    def __init__(
        self, core_v1: Any, dra: DraApi, prefix: str, namespace: str, classes: dict[str, str]
    ) -> None:
        self.core_v1, self.dra, self.prefix, self.ns, self.classes = (
            core_v1,
            dra,
            prefix,
            namespace,
            classes,
        )
        self.nodes = make_group_nodes(core_v1, prefix, 2)
        self.slices = []
        for node, suffix in zip(self.nodes, NODE_DEVICES, strict=True):
            s = dra.create_cluster("resourceslices", node_slice(DRIVER, node, NODE_DEVICES[suffix]))
            self.slices.append(s["metadata"]["name"])
        gpu, nic = classes["gpu"], classes["nic"]
        for name, spec in {
            "cel": claim_spec([exactly("gpu", gpu, BIG_A100)]),
            "pair": claim_spec(
                [exactly("gpu", gpu), exactly("nic", nic)],
                [{"requests": ["gpu", "nic"], "matchAttribute": f"{DRIVER}/numa"}],
            ),
            "prio": claim_spec(
                [
                    first_available(
                        "gpu",
                        ("a100", gpu, [f'device.attributes["{DRIVER}"].model == "a100"']),
                        ("any", gpu, []),
                    )
                ]
            ),
            "shared": claim_spec([exactly("gpu", gpu)]),
            "last-a": claim_spec([exactly("gpu", gpu)]),
            "last-b": claim_spec([exactly("gpu", gpu)]),
            "h100": claim_spec(
                [exactly("gpu", gpu, f'device.attributes["{DRIVER}"].model == "h100"')]
            ),
            "no-class": claim_spec([exactly("gpu", MISSING_CLASS)]),
        }.items():
            dra.create(namespace, "resourceclaims", resource_claim(name, spec))
        dra.create(
            namespace,
            "resourceclaimtemplates",
            claim_template("one-gpu", claim_spec([exactly("gpu", gpu)])),
        )

    def pod(
        self, name: str, scheduler: str, *, claim: str | None = None, template: str | None = None
    ) -> None:
        body = claim_pod(
            name,
            scheduler,
            {GROUP_LABEL: self.prefix},
            claims={"gpu": claim} if claim else {},
            templates={"gpu": template} if template else {},
        )
        pod = self.core_v1.create_namespaced_pod(self.ns, body)
        if template:
            instantiate_templates(self.core_v1, self.dra, self.ns, pod)

    def run(self, scheduler: str, events_v1: Any) -> Outcome:
        """The steps of the module docstring, with pods for ``scheduler``."""
        out = Outcome()

        def bound(*names: str) -> None:
            out.nodes.update(wait_bound(self.core_v1, self.ns, names, timeout=30))

        def failed(name: str) -> None:
            ev = wait_event(events_v1, self.ns, name, "FailedScheduling", timeout=30)
            out.messages[name] = ev.note
            out.nodes[name] = None

        for name in ("cel", "pair", "prio"):
            self.pod(name, scheduler, claim=name)
            bound(name)
        self.pod("templated", scheduler, template="one-gpu")
        bound("templated")
        self.pod("shared-a", scheduler, claim="shared")
        bound("shared-a")
        self.pod("shared-b", scheduler, claim="shared")
        bound("shared-b")

        self.pod("last-a", scheduler, claim="last-a")
        self.pod("last-b", scheduler, claim="last-b")

        def one_bound_one_failed() -> str | None:
            pods = {
                p: self.core_v1.read_namespaced_pod(p, self.ns).spec.node_name
                for p in ("last-a", "last-b")
            }
            failures = events_by_pod(events_v1, self.ns, "FailedScheduling")
            winners = [p for p, n in pods.items() if n]
            losers = [p for p in pods if p in failures]
            return (
                winners[0] if len(winners) == 1 and len(losers) == 1 and winners != losers else None
            )

        winner = wait_for(
            one_bound_one_failed, timeout=30, message="one of last-a/last-b bound, the other failed"
        )
        loser = "last-b" if winner == "last-a" else "last-a"
        bound(winner)
        failed(loser)

        for name in ("h100", "no-class"):
            self.pod(name, scheduler, claim=name)
            failed(name)

        pods = {
            p.metadata.uid: p.metadata.name for p in self.core_v1.list_namespaced_pod(self.ns).items
        }
        renames = {self.prefix: "P"}
        out.nodes = {p: (n.replace(self.prefix, "P") if n else None) for p, n in out.nodes.items()}
        for c in self.dra.claims(self.ns):
            md = c["metadata"]
            owner = next(
                (o["name"] for o in md.get("ownerReferences") or [] if o.get("controller")), None
            )
            key = (
                f"{owner}/{md['annotations']['resource.kubernetes.io/pod-claim-name']}"
                if owner
                else md["name"]
            )
            out.claims[key] = comparable_claim(c, pods, renames)
            out.raw_claims[key] = c
        return out

    def delete_slices(self) -> None:
        for s in self.slices:
            self.dra.delete_cluster("resourceslices", s)


def expected_devices(claims: dict[str, dict[str, Any]]) -> dict[str, list[tuple[str, str, str]]]:
    return {
        k: [(r, p.replace("P-", ""), d) for r, p, d in devices_of(c)] for k, c in claims.items()
    }


def chart_identity(control_plane: Any, kube_client: Any, core_v1: Any, tmp_path: Path) -> Path:
    """A token kubeconfig of the chart's ServiceAccount, its RBAC applied from the rendered
    manifest (as test_e2e_rbac.py does)."""
    docs = load_manifest("kubesched.yaml")
    apply_documents(kube_client, rbac_documents(docs))
    sa = one(docs, "ServiceAccount")["metadata"]
    return write_token_kubeconfig(
        tmp_path / "sa.kubeconfig",
        server=control_plane.url,
        ca_file=control_plane.ca_file,
        token=request_token(core_v1, sa["namespace"], sa["name"]),
        user=sa_user(sa["namespace"], sa["name"]),
    )


@pytest.fixture
def dra(kube_client: Any) -> DraApi:
    return DraApi(kube_client)


def test_dra_kube_scheduler_and_kubesched_allocate_the_same_devices(
    control_plane: Any,
    kube_client: Any,
    core_v1: Any,
    events_v1: Any,
    dra: DraApi,
    test_id: str,
    tmp_path: Path,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    from helpers import make_namespace

    classes = {"gpu": f"gpu-{test_id}", "nic": f"nic-{test_id}"}
    for role, name in classes.items():
        dra.create_cluster(
            "deviceclasses",
            device_class(
                name,
                f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].role == "{role}"',
            ),
        )
    copies: list[Copy] = []
    try:
        theirs = Copy(core_v1, dra, f"dra-{test_id}-k", make_namespace(core_v1, "ks-dra"), classes)
        copies.append(theirs)
        ours = Copy(core_v1, dra, f"dra-{test_id}-o", make_namespace(core_v1, "ks-dra"), classes)
        copies.append(ours)

        # kube-scheduler first: it tells what is expected.
        ks_name = f"ks-{test_id}"
        ks_config = tmp_path / "kube-scheduler.yaml"
        ks_config.write_text(yaml.safe_dump(scheduler_config([{"schedulerName": ks_name}])))
        kube_scheduler = control_plane.start_kube_scheduler(ks_config)
        try:
            kube = theirs.run(ks_name, events_v1)
        finally:
            kube_scheduler.terminate()
            kube_scheduler.wait(30)

        assert kube.nodes == {
            "cel": "P-n00",
            "pair": "P-n01",
            "prio": "P-n00",
            "templated": "P-n01",
            "shared-a": "P-n01",
            "shared-b": "P-n01",
            "last-a": kube.nodes["last-a"],
            "last-b": kube.nodes["last-b"],
            "h100": None,
            "no-class": None,
        }, kube.nodes
        assert {kube.nodes["last-a"], kube.nodes["last-b"]} == {"P-n01", None}
        winner = "last-a" if kube.nodes["last-a"] else "last-b"
        loser = "last-b" if winner == "last-a" else "last-a"
        assert expected_devices(kube.claims) == {
            "cel": [("gpu", "n00", "g1")],
            "pair": [("gpu", "n01", "g1"), ("nic", "n01", "nic0")],
            "prio": [("gpu/a100", "n00", "g0")],
            "templated/gpu": [("gpu", "n01", "g0")],
            "shared": [("gpu", "n01", "g2")],
            winner: [("gpu", "n01", "g3")],
            loser: [],
            "h100": [],
            "no-class": [],
        }
        assert [r["name"] for r in kube.claims["shared"]["reservedFor"]] == ["shared-a", "shared-b"]
        assert kube.claims["cel"]["allocation"]["nodeSelector"] == {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["P-n00"]}]}
            ]
        }
        assert kube.claims["cel"]["finalizers"] == [DELETE_PROTECTION]
        assert kube.claims["h100"] == {"allocation": {}, "reservedFor": [], "finalizers": []}
        total = len(core_v1.list_node().items)
        cannot = (
            f"0/{total} nodes are available: 2 cannot allocate all claims, {total - 2} node(s) didn't match "
            f"Pod's node affinity/selector. still not schedulable, preemption: 0/{total} nodes are available: "
            f"{total} Preemption is not helpful for scheduling."
        )
        assert kube.messages == {
            loser: cannot,
            "h100": cannot,
            "no-class": (
                f"0/{total} nodes are available: request gpu: device class {MISSING_CLASS} does not exist. "
                f"no new claims to deallocate, preemption: 0/{total} nodes are available: "
                f"{total} Preemption is not helpful for scheduling."
            ),
        }, kube.messages

        # kubesched on its copy, with only the chart's RBAC (runtime/deploy/manifests/kubesched.yaml):
        # the same nodes, devices, reservations and messages, and no request refused.
        mine = f"kubesched-{test_id}"
        ks = run_kubesched(
            scheduler_config([{"schedulerName": mine}]),
            kubeconfig=chart_identity(control_plane, kube_client, core_v1, tmp_path),
        )
        ours_out = ours.run(mine, events_v1)
        assert ours_out.nodes == kube.nodes
        assert ours_out.claims == kube.claims
        assert ours_out.messages == kube.messages
        assert denied_lines(ks.log_text()) == []
    finally:
        for c in copies:
            c.delete_slices()
        for name in classes.values():
            dra.delete_cluster("deviceclasses", name)
