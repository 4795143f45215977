"""The Helm chart (runtime/deploy/chart/kubesched), rendered with helm built from its Go module
by runtime/deploy/render.sh.

* RBAC: exact rules for the default values and for each contrib plugin; never '*', secrets,
  escalate/bind/impersonate; the lease rules restricted to the chart's own lock.
* The rules agree with the runtime: the kinds kubesched's informers list+watch for the rendered
  configuration (``cli.required_kinds``) are exactly the kinds granted list+watch, and the write
  rules follow the plugins the runtime actually enables.
* runtime/deploy/manifests/ equals a fresh render.

Where neither helm (``$HELM``, or the cached build) nor Go is available these tests fail: they
are never skipped.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.runtime.cli import required_kinds
from kubesched.runtime.cluster.kubernetes import BUILTIN_RESOURCES
from kubesched.runtime.config import load_config
from kubesched.runtime.framework import Framework, FrameworkServices
from kubesched.runtime.objectstore import ObjectStore
from kubesched.runtime.registry import Registry

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "runtime" / "deploy" / "chart" / "kubesched"
RENDER = REPO / "runtime" / "deploy" / "render.sh"
MANIFESTS = REPO / "runtime" / "deploy" / "manifests"
NAMESPACE = "kubesched-system"
RELEASE = "kubesched"

Perm = tuple[str, str, str, str]  # (apiGroup, resource, verb, resourceName or "")
READ = ("get", "list", "watch")


def grant(
    group: str, resources: Iterable[str], verbs: Iterable[str], names: Iterable[str] = ("",)
) -> set[Perm]:
    return {(group, r, v, n) for r in resources for v in verbs for n in names}


CORE = (
    grant("", ["nodes", "pods"], READ)
    | grant("", ["pods/binding"], ["create"])
    | grant("", ["pods/status"], ["patch"])
    | grant("events.k8s.io", ["events"], ["create"])
)
PREEMPTION = grant("", ["pods"], ["delete"]) | grant(
    "policy", ["poddisruptionbudgets"], READ
)
VOLUMES = grant("", ["persistentvolumeclaims", "persistentvolumes"], READ) | grant(
    "storage.k8s.io",
    ["storageclasses", "csinodes", "csidrivers", "csistoragecapacities", "volumeattachments"],
    READ,
)
VOLUME_BINDING_WRITES = grant("", ["persistentvolumes", "persistentvolumeclaims"], ["patch"])
INTER_POD_AFFINITY = grant("", ["namespaces"], READ)
TOPOLOGY_SPREAD = grant("", ["services", "replicationcontrollers"], READ) | grant(
    "apps", ["replicasets", "statefulsets"], READ
)
#: DynamicResources: kube-scheduler's system:kube-scheduler grants (bootstrappolicy/policy.go)
#: for the PATCHes kubesched sends: the claim's finalizer, its status, and the synthetic
#: resourceclaims/binding (DRAResourceClaimGranularStatusAuthorization); DRAExtendedResource's
#: create/delete of a pod's extended-resource claim
DYNAMIC_RESOURCES = (
    grant("resource.k8s.io", ["resourceclaims", "resourceslices", "deviceclasses"], READ)
    | grant("resource.k8s.io", ["resourceclaims"], ["patch", "create", "delete"])
    | grant("resource.k8s.io", ["resourceclaims/status", "resourceclaims/binding"], ["patch"])
)
DEFAULT_CLUSTER_ROLE = (
    CORE
    | PREEMPTION
    | VOLUMES
    | VOLUME_BINDING_WRITES
    | INTER_POD_AFFINITY
    | TOPOLOGY_SPREAD
    | DYNAMIC_RESOURCES
)
LEADER_ELECTION = grant("coordination.k8s.io", ["leases"], ["create"]) | grant(
    "coordination.k8s.io", ["leases"], ["get", "update"], [RELEASE]
)
CONTRIB_RULES: dict[str, set[Perm]] = {
    "priorityLabel": set(),  # reads node labels only
    "stickyNode": grant("apps", ["statefulsets"], ["get", "list", "watch", "patch"])
    | grant("kubevirt.io", ["virtualmachines"], ["get", "list", "watch", "patch"])
    | grant("kubevirt.io", ["virtualmachineinstances"], ["get", "list", "watch", "patch"]),
    "coscheduling": grant("scheduling.x-k8s.io", ["podgroups"], READ),
    "gpushare": grant("", ["pods"], ["patch"]),  # PreBind writes the gpu-index annotation
}
CONTRIB_NAMES = {
    "priorityLabel": "PriorityLabel",
    "stickyNode": "StickyNode",
    "coscheduling": "Coscheduling",
    "gpushare": "GpuShare",
}
FORBIDDEN_VERBS = {"*", "escalate", "bind", "impersonate"}


# --- rendering ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def fresh_manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """render.sh into a temporary directory (builds helm from Go modules the first time)."""
    out = tmp_path_factory.mktemp("manifests")
    proc = subprocess.run(
        ["bash", str(RENDER), "--out", str(out)], capture_output=True, text=True, timeout=1800
    )
    assert proc.returncode == 0, f"render.sh failed:\n{proc.stdout}\n{proc.stderr}"
    return out


@pytest.fixture(scope="session")
def helm(fresh_manifests: Path) -> str:
    path = os.environ.get("HELM") or str(
        Path(os.environ.get("KUBESCHED_CACHE", Path.home() / ".cache" / "kubesched"))
        / "bin"
        / "helm"
    )
    assert os.access(path, os.X_OK), f"render.sh ran but left no helm at {path}"
    return path


def helm_template(helm: str, values: dict[str, Any], values_file: Path) -> subprocess.CompletedProcess[str]:
    """``helm template`` of the chart with ``values`` (written to ``values_file``)."""
    values_file.write_text(yaml.safe_dump(values))
    return subprocess.run(
        [helm, "template", RELEASE, str(CHART), "--namespace", NAMESPACE, "--kube-version", "1.34.0", "-f", str(values_file)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def render(helm: str, tmp_path: Path) -> Any:
    def _render(values: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        proc = helm_template(helm, values or {}, tmp_path / "values.yaml")
        assert proc.returncode == 0, proc.stderr
        return [d for d in yaml.safe_load_all(proc.stdout) if d]

    return _render


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind} objects"
    return found[0]


def perms(role: dict[str, Any]) -> set[Perm]:
    out: set[Perm] = set()
    for rule in role.get("rules") or []:
        assert "nonResourceURLs" not in rule
        for g in rule["apiGroups"]:
            for r in rule["resources"]:
                for v in rule["verbs"]:
                    for n in rule.get("resourceNames") or [""]:
                        out.add((g, r, v, n))
    return out


def config_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    cm = one(docs, "ConfigMap")
    return yaml.safe_load(cm["data"]["config.yaml"])


def assert_safe(docs: list[dict[str, Any]]) -> None:
    for d in docs:
        if d["kind"] not in ("Role", "ClusterRole"):
            continue
        for g, r, v, _n in perms(d):
            assert "*" not in (g, r, v), (d["metadata"]["name"], g, r, v)
            assert v not in FORBIDDEN_VERBS, (d["metadata"]["name"], r, v)
            assert r.split("/")[0] != "secrets", (d["metadata"]["name"], r, v)


# --- exact rules ----------------------------------------------------------------------------------
def test_default_cluster_role_is_exact(render: Any) -> None:
    docs = render()
    assert_safe(docs)
    assert perms(one(docs, "ClusterRole")) == DEFAULT_CLUSTER_ROLE


def test_leader_election_role_is_restricted_to_the_lock(render: Any) -> None:
    docs = render()
    role = one(docs, "Role")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert perms(role) == LEADER_ELECTION
    le = config_of(docs)["leaderElection"]
    assert le == {
        "leaderElect": True,
        "resourceLock": "leases",
        "resourceName": RELEASE,
        "resourceNamespace": NAMESPACE,
        "leaseDuration": "15s",
        "renewDeadline": "10s",
        "retryPeriod": "2s",
    }
    # a lock in another namespace moves the Role there; the SA stays in the release namespace
    docs = render(
        {"leaderElection": {"resourceName": "my-lock", "resourceNamespace": "kube-system"}}
    )
    role = one(docs, "Role")
    assert role["metadata"]["namespace"] == "kube-system"
    assert perms(role) == grant("coordination.k8s.io", ["leases"], ["create"]) | grant(
        "coordination.k8s.io", ["leases"], ["get", "update"], ["my-lock"]
    )
    binding = one(docs, "RoleBinding")
    assert binding["metadata"]["namespace"] == "kube-system"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": RELEASE, "namespace": NAMESPACE}
    ]


def test_no_leader_election_no_role(render: Any) -> None:
    docs = render({"leaderElection": {"enabled": False}, "replicas": 1})
    assert not [d for d in docs if d["kind"] in ("Role", "RoleBinding")]
    assert config_of(docs)["leaderElection"] == {"leaderElect": False}


@pytest.mark.parametrize("plugin", sorted(CONTRIB_RULES))
def test_contrib_plugin_rules_are_exact(render: Any, plugin: str) -> None:
    docs = render({"contribPlugins": {plugin: {"enabled": True}}})
    assert_safe(docs)
    assert perms(one(docs, "ClusterRole")) == DEFAULT_CLUSTER_ROLE | CONTRIB_RULES[plugin]
    assert perms(one(docs, "Role")) == LEADER_ELECTION
    (profile,) = config_of(docs)["profiles"]
    assert {"name": CONTRIB_NAMES[plugin]} in profile["plugins"]["multiPoint"]["enabled"]


def test_contrib_plugin_named_in_a_profile_gets_its_rules(render: Any) -> None:
    docs = render(
        {
            "profiles": [
                {
                    "schedulerName": "kubesched",
                    "plugins": {"permit": {"enabled": [{"name": "Coscheduling"}]}},
                }
            ]
        }
    )
    assert perms(one(docs, "ClusterRole")) == DEFAULT_CLUSTER_ROLE | CONTRIB_RULES["coscheduling"]


def test_sticky_node_without_kubevirt_and_with_opted_in_owners(render: Any) -> None:
    docs = render({"contribPlugins": {"stickyNode": {"enabled": True, "kubevirt": False}}})
    sts = grant("apps", ["statefulsets"], ["get", "list", "watch", "patch"])
    assert perms(one(docs, "ClusterRole")) == DEFAULT_CLUSTER_ROLE | sts
    owners = [
        {"apiGroup": "apps", "resource": "replicasets"},
        {"apiGroup": "batch", "resource": "jobs"},
    ]
    docs = render(
        {
            "contribPlugins": {
                "stickyNode": {"enabled": True, "kubevirt": False, "extraOwners": owners}
            }
        }
    )
    assert perms(one(docs, "ClusterRole")) == DEFAULT_CLUSTER_ROLE | sts | grant(
        "apps", ["replicasets"], ["get", "list", "watch", "patch"]
    ) | grant("batch", ["jobs"], ["get", "list", "watch", "patch"])


def test_coscheduling_replaces_the_queue_sort(render: Any) -> None:
    docs = render(
        {
            "contribPlugins": {
                "coscheduling": {"enabled": True, "args": {"podGroupBackoffSeconds": 30}}
            }
        }
    )
    (profile,) = config_of(docs)["profiles"]
    assert profile["plugins"]["queueSort"] == {
        "enabled": [{"name": "Coscheduling"}],
        "disabled": [{"name": "PrioritySort"}],
    }
    assert profile["pluginConfig"] == [
        {"name": "Coscheduling", "args": {"podGroupBackoffSeconds": 30}}
    ]


def test_record_results_grants_pod_patch(render: Any) -> None:
    docs = render(
        {
            "recordResults": True,
            "profiles": [
                {
                    "schedulerName": "kubesched",
                    "plugins": {"postFilter": {"disabled": [{"name": "*"}]}},
                }
            ],
        }
    )
    granted = perms(one(docs, "ClusterRole"))
    assert ("", "pods", "patch", "") in granted and ("", "pods", "delete", "") not in granted
    (c,) = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
    assert "--record-results" in c["args"]


def test_contrib_args_go_to_plugin_config(render: Any) -> None:
    docs = render(
        {"contribPlugins": {"priorityLabel": {"enabled": True, "args": {"label": "rank"}}}}
    )
    (profile,) = config_of(docs)["profiles"]
    assert profile["pluginConfig"] == [{"name": "PriorityLabel", "args": {"label": "rank"}}]


def test_extra_rules_need_a_reason_and_refuse_wildcards_and_secrets(
    helm: str, tmp_path: Path, render: Any
) -> None:
    docs = render(
        {
            "rbac": {
                "extraClusterRules": [
                    {
                        "why": "gpu-pack reads inventories",
                        "apiGroups": ["example.com"],
                        "resources": ["gpuinventories"],
                        "verbs": ["get", "list"],
                    }
                ]
            }
        }
    )
    assert perms(one(docs, "ClusterRole")) == DEFAULT_CLUSTER_ROLE | grant(
        "example.com", ["gpuinventories"], ["get", "list"]
    )
    bad = [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]},  # no why
        {"why": "x", "apiGroups": [""], "resources": ["*"], "verbs": ["get"]},
        {"why": "x", "apiGroups": [""], "resources": ["pods"], "verbs": ["*"]},
        {"why": "x", "apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]},
        {
            "why": "x",
            "apiGroups": ["rbac.authorization.k8s.io"],
            "resources": ["clusterroles"],
            "verbs": ["escalate"],
        },
    ]
    for rule in bad:
        proc = helm_template(helm, {"rbac": {"extraClusterRules": [rule]}}, tmp_path / "bad.yaml")
        assert proc.returncode != 0, rule
        assert "extraClusterRules" in proc.stderr


# --- the rules agree with what the runtime does ----------------------------------------------------
#: kinds the contrib plugins watch that are not built in (resolved by discovery at run time)
CUSTOM_KINDS = {
    "VirtualMachine": ("kubevirt.io", "virtualmachines"),
    "PodGroup": ("scheduling.x-k8s.io", "podgroups"),
}


#: kinds plugins read through handle.objects without registering events for them (the runtime
#: starts an informer for each on first read): plugin -> {(apiGroup, resource)}
LAZY_READS = {
    "NodeVolumeLimits": {("", "persistentvolumes"), ("storage.k8s.io", "storageclasses")},
    "StickyNode": {("kubevirt.io", "virtualmachineinstances")},
}


def _plural(kind: str) -> tuple[str, str]:
    if kind in CUSTOM_KINDS:
        return CUSTOM_KINDS[kind]
    gv, plural, _ns = BUILTIN_RESOURCES[kind]
    return (gv.split("/")[0] if "/" in gv else "", plural)


VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "no-preemption": {
        "profiles": [
            {
                "schedulerName": "kubesched",
                "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
            }
        ]
    },
    "no-volume-binding": {
        "profiles": [
            {
                "schedulerName": "kubesched",
                "plugins": {"multiPoint": {"disabled": [{"name": "VolumeBinding"}]}},
            }
        ]
    },
    "only-node-volume-limits": {
        "profiles": [
            {
                "schedulerName": "kubesched",
                "plugins": {
                    "multiPoint": {
                        "disabled": [
                            {"name": n}
                            for n in ("VolumeBinding", "VolumeZone", "VolumeRestrictions")
                        ]
                    }
                },
            }
        ]
    },
    "minimal": {
        "profiles": [
            {
                "schedulerName": "kubesched",
                "plugins": {
                    "multiPoint": {
                        "disabled": [{"name": "*"}],
                        "enabled": [
                            {"name": n}
                            for n in ("PrioritySort", "NodeResourcesFit", "DefaultBinder")
                        ],
                    }
                },
            }
        ]
    },
    "two-profiles": {
        "profiles": [
            {
                "schedulerName": "kubesched",
                "plugins": {
                    "multiPoint": {
                        "disabled": [{"name": "*"}],
                        "enabled": [
                            {"name": n}
                            for n in ("PrioritySort", "NodeResourcesFit", "DefaultBinder")
                        ],
                    }
                },
            },
            {
                "schedulerName": "kubesched-preempting",
                "plugins": {
                    "multiPoint": {
                        "disabled": [{"name": "VolumeBinding"}, {"name": "PodTopologySpread"}]
                    }
                },
            },
        ]
    },
    "score-points-disabled": {
        "profiles": [
            {
                "schedulerName": "kubesched",
                "plugins": {
                    "score": {"disabled": [{"name": "*"}]},
                    "preScore": {"disabled": [{"name": "*"}]},
                },
            }
        ]
    },
    "priority-label": {"contribPlugins": {"priorityLabel": {"enabled": True}}},
    "sticky-node": {"contribPlugins": {"stickyNode": {"enabled": True}}},
    "coscheduling": {"contribPlugins": {"coscheduling": {"enabled": True}}},
    "gpushare": {"contribPlugins": {"gpushare": {"enabled": True}}},
    "all-contrib": {"contribPlugins": {k: {"enabled": True} for k in CONTRIB_NAMES}},
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_rules_match_what_the_runtime_enables(render: Any, tmp_path: Path, variant: str) -> None:
    docs = render(VARIANTS[variant])
    assert_safe(docs)
    cfg_file = tmp_path / "config.yaml"
    cfg_file.write_text(one(docs, "ConfigMap")["data"]["config.yaml"])
    reg = Registry.discover()
    cfg = load_config(str(cfg_file), installed_plugins=reg.names())  # the config the pods will read
    services = FrameworkServices(
        snapshot=lambda: None,
        objects=ObjectStore(),
        clock=None,
        event_recorder=None,
        bind_pod=lambda p, n: None,
    )
    enabled: set[str] = set()  # plugins that run at some extension point
    built: set[str] = set()  # plugins built (pluginsNeeded: every plugin multiPoint enables)
    post_filter: set[str] = set()  # plugins that run at PostFilter (DefaultPreemption evicts there)
    for profile in cfg.profiles:
        fw = Framework.build(profile, reg, services, source=cfg.source)
        built |= set(fw.plugins)
        enabled |= {name for names in fw.points.values() for name in names}
        post_filter |= set(fw.points.get("postFilter", []))
    granted = perms(one(docs, "ClusterRole"))

    # the informers: exactly the kinds kubesched list+watches are granted get+list+watch: those
    # of cli.required_kinds (started at start-up) and those the enabled plugins read through
    # handle.objects without registering events for them (informers started on first read)
    watched = {_plural(k) for k in ["Node", "Pod", *required_kinds(cfg, reg)]}
    for plugin in built:
        watched |= LAZY_READS.get(plugin, set())
    for verb in READ:
        assert {(g, r) for g, r, v, _ in granted if v == verb} == watched, verb
    # writes follow the plugins that run
    # DefaultPreemption also runs at PreEnqueue (holding a preemptor while its victims are
    # evicted), which writes nothing: the evictions come from its PostFilter
    assert (("", "pods", "delete", "") in granted) == ("DefaultPreemption" in post_filter)
    assert (("", "persistentvolumes", "patch", "") in granted) == ("VolumeBinding" in enabled)
    assert (("", "persistentvolumeclaims", "patch", "") in granted) == ("VolumeBinding" in enabled)
    assert (("", "services", "list", "") in granted) == ("PodTopologySpread" in enabled)
    assert (("apps", "statefulsets", "patch", "") in granted) == ("StickyNode" in enabled)
    assert (("", "pods", "patch", "") in granted) == ("GpuShare" in enabled)
    dra_writes = {p for p in DYNAMIC_RESOURCES if p[2] not in READ}
    assert (dra_writes <= granted) == ("DynamicResources" in enabled)
    assert not (dra_writes & granted) or "DynamicResources" in enabled
    assert CORE <= granted


# --- manifests ------------------------------------------------------------------------------------
def test_committed_manifests_equal_a_fresh_render(fresh_manifests: Path) -> None:
    committed = sorted(p.name for p in MANIFESTS.glob("*.yaml"))
    assert committed == sorted(p.name for p in fresh_manifests.glob("*.yaml"))
    for name in committed:
        assert (MANIFESTS / name).read_text() == (fresh_manifests / name).read_text(), (
            f"runtime/deploy/manifests/{name} is stale: run runtime/deploy/render.sh"
        )


def test_rendered_manifest_is_self_contained() -> None:
    docs = [d for d in yaml.safe_load_all((MANIFESTS / "kubesched.yaml").read_text()) if d]
    kinds = [d["kind"] for d in docs]
    assert kinds[0] == "Namespace" and docs[0]["metadata"]["name"] == NAMESPACE
    for d in docs:
        if d["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert d["metadata"]["namespace"] == NAMESPACE, d["metadata"]["name"]
    sa = one(docs, "ServiceAccount")
    assert sa["metadata"] == {**sa["metadata"], "name": RELEASE, "namespace": NAMESPACE}
    for b in (one(docs, "ClusterRoleBinding"), one(docs, "RoleBinding")):
        assert b["subjects"] == [
            {"kind": "ServiceAccount", "name": RELEASE, "namespace": NAMESPACE}
        ]
    assert (
        one(docs, "ClusterRoleBinding")["roleRef"]["name"]
        == one(docs, "ClusterRole")["metadata"]["name"]
    )
    assert one(docs, "RoleBinding")["roleRef"]["name"] == one(docs, "Role")["metadata"]["name"]
    assert_safe(docs)


def test_deployment_is_hardened_and_probed(render: Any) -> None:
    docs = render()
    dep = one(docs, "Deployment")
    assert dep["spec"]["replicas"] == 2
    pod = dep["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == RELEASE
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert c["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "metrics"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert c["ports"] == [{"name": "metrics", "containerPort": 10251, "protocol": "TCP"}]
    assert "--config=/etc/kubesched/config.yaml" in c["args"]
    assert "--address=0.0.0.0:10251" in c["args"]
    assert set(c["resources"]) == {"requests", "limits"}
    mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
    assert mounts == {"/etc/kubesched": "config", "/tmp": "tmp"}
    vols = {v["name"]: v for v in pod["volumes"]}
    assert "emptyDir" in vols["tmp"]
    assert vols["config"]["configMap"]["name"] == one(docs, "ConfigMap")["metadata"]["name"]


def test_more_than_one_replica_needs_leader_election(helm: str, tmp_path: Path) -> None:
    proc = helm_template(helm, {"leaderElection": {"enabled": False}}, tmp_path / "v.yaml")
    assert proc.returncode != 0 and "leaderElection" in proc.stderr
