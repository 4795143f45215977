"""The rendered chart's RBAC on a real API server (``--authorization-mode=RBAC``): kubesched runs
with nothing but the chart's ServiceAccount identity, and that identity can do no more than the
scheduler needs.

For each rendered manifest (``runtime/deploy/manifests/kubesched.yaml`` and
``kubesched-with-contrib.yaml``) the Namespace, ServiceAccount, ClusterRole(Binding),
Role(Binding) and ConfigMap are applied as they are rendered (not the Deployment: nothing runs
containers here); a token for ``kubesched-system/kubesched`` comes from the TokenRequest API and
goes into a kubeconfig with no other credential; ``kubesched run`` reads the ConfigMap's
``config.yaml`` (leader election on the Lease ``kubesched-system/kubesched``, as rendered).

* ``test_schedules_with_only_the_service_account``: it holds the Lease, binds pods with
  ``Scheduled`` events and ``PodScheduled`` conditions, preempts a lower-priority pod (the
  victim's ``DisruptionTarget`` status patch and its deletion, the preemptor's
  ``nominatedNodeName``), with the contrib plugins also StickyNode's StatefulSet patch and a
  Coscheduling gang; releases the Lease on SIGTERM; its log has no 401/403 line; and the kinds
  the ClusterRole lets it read are exactly the kinds its informers watched.
* ``test_applied_roles_are_least_privilege``: the ClusterRole and Role read back from the API
  server have no ``*``, no secrets, no escalate/bind/impersonate, no non-resource URLs, no
  aggregation; every write is one the runtime issues; the Lease rules are limited to the lock.
* ``test_access_reviews``: SubjectAccessReview (asked by the admin, for the ServiceAccount's user
  and groups) and SelfSubjectAccessReview (asked with the token) agree on what it can and cannot
  do; system:anonymous can do none of it (the token is what grants it).
* ``test_refused_requests``: real requests with the token (a secret, a pod, a node, another
  Lease, ConfigMaps) are answered 403.

Not asserted (yet): the ``patch`` verb on ``pods`` of DefaultPreemption's rule is unused, as
preemption now patches ``pods/status``; this test passes with the verb removed from the
ClusterRole, and it is needed only with ``recordResults``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_contrib import ensure_podgroup_crd, make_owned_pod, make_pod_group, make_statefulset
from e2e_rbac import (
    Access,
    PodHistory,
    apply_documents,
    client_for,
    denied_lines,
    load_manifest,
    one,
    perms,
    rbac_documents,
    request_token,
    sa_groups,
    sa_user,
    self_subject_access_review,
    subject_access_review,
    whoami,
    write_token_kubeconfig,
)
from e2e_sched import (
    GROUP_LABEL,
    KUBESCHED_CONTROLLER,
    Kubesched,
    make_group_nodes,
    make_pods,
    pod_condition,
    wait_bound,
    wait_event,
    wait_scheduled_events,
)
from helpers import make_pod, wait_for
from kubernetes import client

from kubesched.runtime.cluster.kubernetes import BUILTIN_RESOURCES

NAMESPACE = "kubesched-system"
SERVICE_ACCOUNT = "kubesched"
CONFIGMAP = "kubesched-config"
SCHEDULER = "kubesched"
LEASE = "kubesched"

READ = ("get", "list", "watch")
FORBIDDEN_VERBS = {"*", "escalate", "bind", "impersonate"}

#: Every write the runtime issues, and where (paths under runtime/src/kubesched/runtime/ and
#: plugins-contrib/): the only non-read permissions a ClusterRole may hold.
RUNTIME_WRITES: dict[tuple[str, str, str], str] = {
    ("", "pods/binding", "create"): "KubernetesCluster.bind",
    ("", "pods/status", "patch"): "KubernetesCluster.update_pod_condition; DefaultPreemption",
    ("events.k8s.io", "events", "create"): "KubernetesCluster.event",
    ("", "pods", "delete"): "DefaultPreemption.preempt_pod",
    ("", "pods", "patch"): "KubernetesCluster.annotate_pod (--record-results)",
    ("", "persistentvolumes", "patch"): "VolumeBinding binder.bind_api_update",
    ("", "persistentvolumeclaims", "patch"): "VolumeBinding binder.bind_api_update",
    ("apps", "statefulsets", "patch"): "StickyNode PostBind",
    ("kubevirt.io", "virtualmachines", "patch"): "StickyNode PostBind",
    ("kubevirt.io", "virtualmachineinstances", "patch"): "StickyNode PostBind",
    ("resource.k8s.io", "resourceclaims", "patch"): "DynamicResources PreBind (finalizer)",
    ("resource.k8s.io", "resourceclaims", "create"): "DynamicResources PreBind (DRAExtendedResource)",
    ("resource.k8s.io", "resourceclaims", "delete"): "DynamicResources Unreserve (DRAExtendedResource)",
    ("resource.k8s.io", "resourceclaims/status", "patch"): "DynamicResources PreBind, PostFilter, Unreserve",
    ("resource.k8s.io", "resourceclaims/binding", "patch"): "DynamicResources (status.allocation, reservedFor)",
}

#: Kinds outside BUILTIN_RESOURCES that the contrib plugins watch: (apiGroup, plural).
CUSTOM_KINDS = {
    "PodGroup": ("scheduling.x-k8s.io", "podgroups"),
    "VirtualMachine": ("kubevirt.io", "virtualmachines"),
    "VirtualMachineInstance": ("kubevirt.io", "virtualmachineinstances"),
}
#: Read, but only lazily (an informer on first use), by a plugin of the profile: StickyNode
#: reads the VirtualMachineInstance that owns a virt-launcher pod.
LAZY_READS = {"StickyNode": {("kubevirt.io", "virtualmachineinstances")}}

MANIFESTS = {"default": "kubesched.yaml", "contrib": "kubesched-with-contrib.yaml"}

#: Minimal KubeVirt CRDs (only what discovery and list/watch need), so that StickyNode's
#: VirtualMachine informer runs under the ServiceAccount too.
KUBEVIRT_CRDS: list[dict[str, Any]] = [
    {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.kubevirt.io"},
        "spec": {
            "group": "kubevirt.io",
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }
    for kind, plural in (
        ("VirtualMachine", "virtualmachines"),
        ("VirtualMachineInstance", "virtualmachineinstances"),
    )
]


@dataclass
class Installed:
    """One rendered manifest's RBAC, applied; and a token kubeconfig for its ServiceAccount."""

    variant: str
    docs: list[dict[str, Any]]
    config_text: str
    kubeconfig: Path
    user: str
    groups: list[str]

    @property
    def config(self) -> dict[str, Any]:
        return dict(yaml.safe_load(self.config_text))

    @property
    def plugins(self) -> set[str]:
        out: set[str] = set()
        for p in self.config["profiles"]:
            for point in (p.get("plugins") or {}).values():
                out |= {e["name"] for e in point.get("enabled") or []}
        return out


def _install_kubevirt_crds(kube_client: Any) -> None:
    ext: Any = client.ApiextensionsV1Api(kube_client)
    for crd in KUBEVIRT_CRDS:
        try:
            ext.create_custom_resource_definition(crd)
        except client.ApiException as e:
            if e.status != 409:
                raise

    def served() -> bool:
        res = client.CustomObjectsApi(kube_client).get_api_resources("kubevirt.io", "v1")
        have = {r.name for r in res.resources or []}
        return {"virtualmachines", "virtualmachineinstances"} <= have

    wait_for(served, timeout=60, message="kubevirt.io/v1 in discovery")


def _remove_kubevirt_crds(kube_client: Any) -> None:
    ext: Any = client.ApiextensionsV1Api(kube_client)
    for crd in KUBEVIRT_CRDS:
        try:
            ext.delete_custom_resource_definition(crd["metadata"]["name"])
        except client.ApiException as e:
            if e.status != 404:
                raise

    def gone() -> bool:
        for crd in KUBEVIRT_CRDS:
            try:
                ext.read_custom_resource_definition(crd["metadata"]["name"])
                return False
            except client.ApiException as e:
                if e.status != 404:
                    raise
        return True

    wait_for(gone, timeout=60, message="the KubeVirt CRDs to be removed")


@pytest.fixture(scope="module", params=sorted(MANIFESTS))
def installed(
    request: pytest.FixtureRequest,
    control_plane: Any,
    kube_client: Any,
    core_v1: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Installed]:
    variant = request.param
    docs = load_manifest(MANIFESTS[variant])
    crds = variant == "contrib"
    if crds:
        # the contrib plugins' kinds exist, so their informers list+watch with the token too
        ensure_podgroup_crd(kube_client)
        _install_kubevirt_crds(kube_client)
    try:
        applied = apply_documents(kube_client, rbac_documents(docs))
        assert sorted(o["kind"] for o in applied) == sorted(
            ["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"]
            + ["Role", "RoleBinding", "ConfigMap"]
        )
        # The configuration kubesched runs with is the ConfigMap as stored in the cluster.
        cm = core_v1.read_namespaced_config_map(CONFIGMAP, NAMESPACE)
        config_text = cm.data["config.yaml"]
        assert config_text == one(docs, "ConfigMap")["data"]["config.yaml"]

        token = request_token(core_v1, NAMESPACE, SERVICE_ACCOUNT, seconds=3600)
        user = sa_user(NAMESPACE, SERVICE_ACCOUNT)
        kubeconfig = write_token_kubeconfig(
            tmp_path_factory.mktemp(f"rbac-{variant}") / "sa.kubeconfig",
            server=control_plane.url,
            ca_file=control_plane.ca_file,
            token=token,
            user=user,
        )
        yield Installed(variant, docs, config_text, kubeconfig, user, sa_groups(NAMESPACE))
    finally:
        if crds:
            _remove_kubevirt_crds(kube_client)


@pytest.fixture
def sa_client(installed: Installed) -> Iterator[client.ApiClient]:
    api = client_for(installed.kubeconfig)
    try:
        yield api
    finally:
        api.close()


@pytest.fixture
def priority_classes(kube_client: Any, test_id: str) -> Iterator[tuple[str, str]]:
    sched = client.SchedulingV1Api(kube_client)
    low, high = f"rbac-low-{test_id}", f"rbac-high-{test_id}"
    for name, value in ((low, 100), (high, 1000)):
        body: Any = {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
        }
        sched.create_priority_class(body)
    yield low, high
    for name in (low, high):
        try:
            sched.delete_priority_class(name)
        except client.ApiException as e:
            if e.status != 404:
                raise


@pytest.fixture
def nodes(installed: Installed, core_v1: Any, test_id: str) -> Iterator[tuple[str, str, str]]:
    """Two nodes in group ``rbac-<id>`` (2 cpus), one in ``rbac-full-<id>`` (1 cpu): (group,
    full group, the full group's node). With the contrib plugins PriorityLabel filters out nodes
    without a ``priority`` label: these carry one while the test runs."""
    labels = {"priority": "1"} if "PriorityLabel" in installed.plugins else {}
    group, full = f"rbac-{test_id}", f"rbac-full-{test_id}"
    names = make_group_nodes(core_v1, group, 2, cpu="2", memory="8Gi", labels=labels)
    (full_node,) = make_group_nodes(core_v1, full, 1, cpu="1", memory="4Gi", labels=labels)
    yield group, full, full_node
    if labels:  # profiles of other tests see every node: leave no `priority` label behind
        for n in [*names, full_node]:
            core_v1.patch_node(n, {"metadata": {"labels": {"priority": None}}})


def _lease_holder(coordination: Any) -> str | None:
    try:
        return coordination.read_namespaced_lease(LEASE, NAMESPACE).spec.holder_identity
    except client.ApiException as e:
        if e.status == 404:
            return None
        raise


def _watched_kinds(log: str) -> list[str]:
    """The kinds of the informers kubesched started (its "caches synced: ..." line)."""
    for line in log.splitlines():
        if "caches synced: " in line:
            tail = line.split("caches synced: ", 1)[1]
            return [k.strip().strip('"}') for k in tail.split(",") if k.strip()]
    raise AssertionError(f"no 'caches synced' line in the log:\n{log[-3000:]}")


def _resource_of(kind: str) -> tuple[str, str]:
    if kind in CUSTOM_KINDS:
        return CUSTOM_KINDS[kind]
    gv, plural, _ = BUILTIN_RESOURCES[kind]
    return (gv.split("/")[0] if "/" in gv else "", plural)


def _conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return list((pod.get("status") or {}).get("conditions") or [])


# ---------------------------------------------------------------------------------------------
# kubesched with the ServiceAccount's identity


def test_schedules_with_only_the_service_account(
    installed: Installed,
    kube_client: Any,
    core_v1: Any,
    events_v1: Any,
    sa_client: client.ApiClient,
    namespace: str,
    test_id: str,
    priority_classes: tuple[str, str],
    nodes: tuple[str, str, str],
    run_kubesched: Callable[..., Kubesched],
) -> None:
    # The kubeconfig holds a token and nothing else; it authenticates as the ServiceAccount.
    kc = yaml.safe_load(installed.kubeconfig.read_text())
    (user,) = kc["users"]
    assert set(user["user"]) == {"token"}, user
    assert whoami(sa_client) == (installed.user, installed.groups)

    coordination: Any = client.CoordinationV1Api(kube_client)
    group, full, full_node = nodes
    contrib = installed.variant == "contrib"
    labels = {"app": f"web-{test_id}"}
    if contrib:
        # StickyNode reads the owner from its informer: the StatefulSet exists before start
        sts = make_statefulset(kube_client, "web", namespace, labels)

    identity = f"kubesched-rbac-{installed.variant}-{test_id}"
    ks = run_kubesched(
        installed.config_text,
        kubeconfig=installed.kubeconfig,
        identity=identity,
        name=f"kubesched-{installed.variant}",
    )
    # the rendered leader election: the Lease kubesched-system/kubesched, held by this process
    wait_for(
        lambda: _lease_holder(coordination) == identity,
        timeout=45,
        message=f"{identity} to hold {NAMESPACE}/{LEASE}",
    )
    wait_for(
        lambda: ks.metric("leader_election_master_status", name=LEASE) == 1,
        timeout=15,
        message="the leader metric",
    )

    with PodHistory(core_v1, namespace) as history:
        # 1. plain pods: bound, each with a Scheduled event and PodScheduled=True
        sel = {GROUP_LABEL: group}
        pods = make_pods(
            core_v1,
            [f"p-{i}" for i in range(4)],
            namespace,
            scheduler_name=SCHEDULER,
            node_selector=sel,
        )
        placement = wait_bound(core_v1, namespace, pods, timeout=60)
        assert set(placement.values()) <= {f"{group}-n00", f"{group}-n01"}
        scheduled = wait_scheduled_events(events_v1, namespace, pods, timeout=30)
        for name in pods:
            evs = scheduled[name]
            assert [e.reporting_controller for e in evs] == [KUBESCHED_CONTROLLER], evs
            assert f"to {placement[name]}" in evs[0].note, evs[0].note

            def condition_true(name: str = name) -> bool:
                c = pod_condition(core_v1.read_namespaced_pod(name, namespace))
                return c is not None and c.status == "True"

            wait_for(condition_true, timeout=30, message=f"PodScheduled=True on {name}")

        # 2. contrib: StickyNode patches the StatefulSet; Coscheduling reads the PodGroup
        if contrib:
            from kubesched_coscheduling import POD_GROUP_LABEL

            make_owned_pod(
                core_v1,
                "web-0",
                namespace,
                sts,
                scheduler_name=SCHEDULER,
                group=group,
                labels=labels,
            )
            web0 = wait_bound(core_v1, namespace, ["web-0"])["web-0"]
            apps = client.AppsV1Api(kube_client)

            def remembered() -> str | None:
                obj: Any = apps.read_namespaced_stateful_set("web", namespace)
                return (obj.metadata.annotations or {}).get("sticky-node.kubesched.io/web-0")

            assert wait_for(remembered, timeout=30, message="StickyNode's annotation") == web0
            make_pod_group(kube_client, "gang", namespace, {"minMember": 2})
            gang = [f"gang-{i}" for i in range(2)]
            for name in gang:
                make_owned_pod(
                    core_v1,
                    name,
                    namespace,
                    None,
                    scheduler_name=SCHEDULER,
                    group=group,
                    labels={POD_GROUP_LABEL: "gang"},
                )
            wait_bound(core_v1, namespace, gang, timeout=60)

        # 3. preemption: a full node, a higher-priority pod evicts the lower one
        low, high = priority_classes
        full_sel = {GROUP_LABEL: full}
        make_pod(
            core_v1,
            "victim",
            namespace,
            cpu="700m",
            scheduler_name=SCHEDULER,
            node_selector=full_sel,
            spec_overrides={"priorityClassName": low},
        )
        assert wait_bound(core_v1, namespace, ["victim"]) == {"victim": full_node}
        make_pod(
            core_v1,
            "preemptor",
            namespace,
            cpu="700m",
            scheduler_name=SCHEDULER,
            node_selector=full_sel,
            spec_overrides={"priorityClassName": high},
        )
        preempted = wait_event(events_v1, namespace, "victim", "Preempted", timeout=60)
        assert preempted.reporting_controller == KUBESCHED_CONTROLLER
        assert f"on node {full_node}" in preempted.note, preempted.note
        assert wait_bound(core_v1, namespace, ["preemptor"], timeout=60) == {"preemptor": full_node}
        wait_for(lambda: "victim" in history.deleted, timeout=30, message="the victim's deletion")
        wait_for(
            lambda: any(
                (v.get("status") or {}).get("nominatedNodeName") == full_node
                for v in history.of("preemptor")
            ),
            timeout=10,
            message="the preemptor's nominatedNodeName in a watch event",
        )

    # the victim was marked (pods/status patch) before it was deleted (pods delete)
    targets = [
        c
        for v in history.of("victim")
        for c in _conditions(v)
        if c.get("type") == "DisruptionTarget"
    ]
    assert targets, f"no DisruptionTarget condition on the victim: {history.of('victim')}"
    assert targets[-1]["status"] == "True"
    assert targets[-1]["reason"] == "PreemptionByScheduler"
    failed = [
        e
        for e in events_v1.list_namespaced_event(namespace).items
        if e.regarding and e.regarding.name == "preemptor" and e.reason == "FailedScheduling"
    ]
    assert failed and all(e.reporting_controller == KUBESCHED_CONTROLLER for e in failed)
    assert (ks.metric("scheduler_preemption_attempts_total") or 0) >= 1

    log = ks.log_text()
    assert not denied_lines(log), "\n".join(denied_lines(log)[:20])

    # The ClusterRole grants reads of exactly the kinds kubesched watched (plus what a plugin of
    # the profile reads lazily): nothing is granted that the process did not use.
    watched = {_resource_of(k) for k in _watched_kinds(log)}
    lazy: set[tuple[str, str]] = set()
    for plugin in installed.plugins:
        lazy |= LAZY_READS.get(plugin, set())
    granted = perms(one(installed.docs, "ClusterRole"))
    for verb in READ:
        reads = {(g, r) for g, r, v, _ in granted if v == verb}
        assert watched <= reads, (verb, watched - reads)
        assert reads <= watched | lazy, (verb, "granted, never read", reads - watched - lazy)

    # SIGTERM: kubesched releases the Lease (PUT, allowed by resourceNames) and exits 0.
    assert ks.terminate() == 0, ks.log_tail()
    assert _lease_holder(coordination) in ("", None)
    log = ks.log_text()
    assert f"released lease {NAMESPACE}/{LEASE}" in log
    assert not denied_lines(log), "\n".join(denied_lines(log)[:20])


# ---------------------------------------------------------------------------------------------
# the rules as the API server holds them


def test_applied_roles_are_least_privilege(installed: Installed, kube_client: Any) -> None:
    rbac: Any = client.RbacAuthorizationV1Api(kube_client)
    ser = kube_client.sanitize_for_serialization
    cluster_role = ser(rbac.read_cluster_role(SERVICE_ACCOUNT))
    role = ser(rbac.read_namespaced_role(f"{SERVICE_ACCOUNT}-leader-election", NAMESPACE))
    # stored as rendered
    assert perms(cluster_role) == perms(one(installed.docs, "ClusterRole"))
    assert perms(role) == perms(one(installed.docs, "Role"))
    # nobody can add rules to it through aggregation
    assert not cluster_role.get("aggregationRule"), cluster_role["aggregationRule"]

    for obj in (cluster_role, role):
        what = f"{obj['kind']} {obj['metadata']['name']}"
        for rule in obj["rules"]:
            assert not rule.get("nonResourceURLs"), (what, rule)
            for field in ("apiGroups", "resources", "verbs", "resourceNames"):
                assert not any("*" in x for x in rule.get(field) or []), (what, field, rule)
        for g, r, v, _n in perms(obj):
            assert r.split("/")[0] != "secrets", (what, g, r, v)
            assert v not in FORBIDDEN_VERBS, (what, g, r, v)

    # every write is one the runtime issues
    writes = {(g, r, v) for g, r, v, _ in perms(cluster_role) if v not in READ}
    assert writes <= set(RUNTIME_WRITES), writes - set(RUNTIME_WRITES)
    assert not {(g, r, v) for g, r, v, _ in perms(cluster_role) if g == "coordination.k8s.io"}

    # the Role: only the Lease; create (which RBAC cannot limit by name), get/update of the lock
    le = installed.config["leaderElection"]
    assert (le["resourceNamespace"], le["resourceName"]) == (NAMESPACE, LEASE)
    assert role["metadata"]["namespace"] == NAMESPACE
    assert perms(role) == {
        ("coordination.k8s.io", "leases", "create", ""),
        ("coordination.k8s.io", "leases", "get", LEASE),
        ("coordination.k8s.io", "leases", "update", LEASE),
    }

    # bound to the ServiceAccount only
    subject = [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]
    crb = ser(rbac.read_cluster_role_binding(SERVICE_ACCOUNT))
    assert crb["subjects"] == subject
    assert crb["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": SERVICE_ACCOUNT,
    }
    rb = ser(rbac.read_namespaced_role_binding(f"{SERVICE_ACCOUNT}-leader-election", NAMESPACE))
    assert rb["subjects"] == subject
    assert rb["roleRef"]["kind"] == "Role"
    assert rb["roleRef"]["name"] == f"{SERVICE_ACCOUNT}-leader-election"


# ---------------------------------------------------------------------------------------------
# what the identity can and cannot do


def _cannot(namespace: str) -> list[Access]:
    return [
        Access("get", "secrets", namespace=NAMESPACE, name="anything"),
        Access("get", "secrets", namespace=namespace),
        Access("list", "secrets"),
        Access("watch", "secrets"),
        Access("create", "pods", namespace=namespace),
        Access("update", "pods", namespace=namespace),
        Access("deletecollection", "pods", namespace=namespace),
        Access("create", "pods/eviction", namespace=namespace),
        Access("create", "pods/exec", namespace=namespace),
        Access("update", "pods/status", namespace=namespace),
        Access("delete", "nodes", name="some-node"),
        Access("patch", "nodes", name="some-node"),
        Access("patch", "nodes/status", name="some-node"),
        Access("create", "nodes"),
        Access("update", "leases", "coordination.k8s.io", NAMESPACE, "another-lock"),
        Access("get", "leases", "coordination.k8s.io", NAMESPACE, "another-lock"),
        Access("delete", "leases", "coordination.k8s.io", NAMESPACE, LEASE),
        Access("patch", "leases", "coordination.k8s.io", NAMESPACE, LEASE),
        Access("list", "leases", "coordination.k8s.io", NAMESPACE),
        Access("update", "leases", "coordination.k8s.io", "kube-system", "kube-scheduler"),
        Access("create", "leases", "coordination.k8s.io", "kube-system"),
        Access("list", "configmaps"),
        Access("get", "configmaps", namespace=NAMESPACE, name=CONFIGMAP),
        Access("update", "configmaps", namespace=NAMESPACE, name=CONFIGMAP),
        Access("create", "serviceaccounts/token", namespace=NAMESPACE, name=SERVICE_ACCOUNT),
        Access("impersonate", "users"),
        Access("impersonate", "serviceaccounts", namespace="kube-system"),
        Access("escalate", "clusterroles", "rbac.authorization.k8s.io", name=SERVICE_ACCOUNT),
        Access("bind", "clusterroles", "rbac.authorization.k8s.io", name="cluster-admin"),
        Access("update", "clusterroles", "rbac.authorization.k8s.io", name=SERVICE_ACCOUNT),
        Access("create", "rolebindings", "rbac.authorization.k8s.io", NAMESPACE),
        Access("create", "events", namespace=namespace),  # only events.k8s.io/v1 is written
        Access("delete", "events", "events.k8s.io", namespace),
        Access("update", "deployments", "apps", NAMESPACE, SERVICE_ACCOUNT),
        Access("create", "priorityclasses", "scheduling.k8s.io"),
        Access("create", "customresourcedefinitions", "apiextensions.k8s.io"),
        Access("update", "resourceclaims/status", "resource.k8s.io", namespace, "c"),
        Access("create", "resourceslices", "resource.k8s.io"),
        Access("list", "resourceclaimtemplates", "resource.k8s.io"),
    ]


def _can(namespace: str) -> list[Access]:
    return [
        Access("create", "pods/binding", namespace=namespace),
        Access("create", "events", "events.k8s.io", namespace),
        Access("patch", "pods/status", namespace=namespace),
        Access("delete", "pods", namespace=namespace),
        Access("get", "leases", "coordination.k8s.io", NAMESPACE, LEASE),
        Access("update", "leases", "coordination.k8s.io", NAMESPACE, LEASE),
        Access("create", "leases", "coordination.k8s.io", NAMESPACE),
        Access("list", "nodes"),
        Access("watch", "nodes"),
        Access("list", "pods"),
        Access("watch", "pods"),
        Access("get", "pods", namespace=namespace, name="p"),
        Access("list", "poddisruptionbudgets", "policy"),
        Access("watch", "resourceslices", "resource.k8s.io"),
        Access("patch", "resourceclaims/status", "resource.k8s.io", namespace, "c"),
        Access("patch", "resourceclaims/binding", "resource.k8s.io"),
    ]


def test_access_reviews(
    installed: Installed, kube_client: Any, sa_client: client.ApiClient, namespace: str
) -> None:
    assert whoami(sa_client) == (installed.user, installed.groups)
    admin_authz = client.AuthorizationV1Api(kube_client)
    sa_authz = client.AuthorizationV1Api(sa_client)
    wrong = []
    for expected, accesses in ((False, _cannot(namespace)), (True, _can(namespace))):
        for access in accesses:
            allowed, reason = subject_access_review(
                admin_authz, installed.user, installed.groups, access
            )
            self_allowed = self_subject_access_review(sa_authz, access)
            if (allowed, self_allowed) != (expected, expected):
                wrong.append(f"{access}: SAR {allowed} ({reason}), SSAR {self_allowed}")
    assert not wrong, "\n".join(wrong)

    # The token is what makes it work: an anonymous request could not bind or write events.
    for access in (
        Access("create", "pods/binding", namespace=namespace),
        Access("create", "events", "events.k8s.io", namespace),
        Access("list", "nodes"),
    ):
        allowed, _ = subject_access_review(admin_authz, "system:anonymous", [], access)
        assert not allowed, f"system:anonymous may {access}"


def test_refused_requests(
    installed: Installed,
    kube_client: Any,
    core_v1: Any,
    sa_client: client.ApiClient,
    namespace: str,
    test_id: str,
) -> None:
    """Real requests with the token, each answered 403 by the API server."""
    coordination_admin: Any = client.CoordinationV1Api(kube_client)
    secret = f"decoy-{test_id}"
    other_lock = f"another-lock-{test_id}"
    body: Any = {"metadata": {"name": secret}, "stringData": {"k": "v"}}
    core_v1.create_namespaced_secret(NAMESPACE, body)
    lease: Any = {"metadata": {"name": other_lock}, "spec": {"holderIdentity": "someone"}}
    coordination_admin.create_namespaced_lease(NAMESPACE, lease)
    sa_core: Any = client.CoreV1Api(sa_client)
    sa_coord: Any = client.CoordinationV1Api(sa_client)
    node = f"rbac-ro-{test_id}"
    make_group_nodes(core_v1, node, 1)
    try:
        attempts: dict[str, Callable[[], Any]] = {
            "get a secret": lambda: sa_core.read_namespaced_secret(secret, NAMESPACE),
            "list secrets cluster-wide": lambda: sa_core.list_secret_for_all_namespaces(),
            "create a pod": lambda: make_pod(sa_core, "intruder", namespace),
            "delete a node": lambda: sa_core.delete_node(f"{node}-n00"),
            "patch a node": lambda: sa_core.patch_node(
                f"{node}-n00", {"metadata": {"labels": {"x": "y"}}}
            ),
            "update another lease": lambda: sa_coord.replace_namespaced_lease(
                other_lock,
                NAMESPACE,
                coordination_admin.read_namespaced_lease(other_lock, NAMESPACE),
            ),
            "read another lease": lambda: sa_coord.read_namespaced_lease(other_lock, NAMESPACE),
            "list configmaps cluster-wide": lambda: sa_core.list_config_map_for_all_namespaces(),
            "read its own ConfigMap": lambda: sa_core.read_namespaced_config_map(
                CONFIGMAP, NAMESPACE
            ),
        }
        answers = {}
        for what, call in attempts.items():
            try:
                call()
                answers[what] = 200
            except client.ApiException as e:
                answers[what] = e.status
        assert answers == dict.fromkeys(attempts, 403)
        # while its own lock is readable (404 when no kubesched ran yet: not 403)
        try:
            sa_coord.read_namespaced_lease(LEASE, NAMESPACE)
        except client.ApiException as e:
            assert e.status == 404, e
    finally:
        core_v1.delete_namespaced_secret(secret, NAMESPACE)
        coordination_admin.delete_namespaced_lease(other_lock, NAMESPACE)
