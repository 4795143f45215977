"""Helpers for running kubesched with only the rendered chart's RBAC (test_e2e_rbac.py): load the
rendered manifests, apply their documents with the admin client, mint a ServiceAccount token
through the TokenRequest API, write a token kubeconfig, and ask the authorizer (SubjectAccessReview
as an admin, SelfSubjectAccessReview with the identity's own client) what an identity may do.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from e2e_sched import PodWatchThread
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.dynamic import DynamicClient

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "runtime" / "deploy" / "manifests"

#: What the RBAC test applies from a rendered manifest: everything but the workload (nothing
#: runs containers on the e2e control plane).
RBAC_KINDS = (
    "Namespace",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ConfigMap",
)

FIELD_MANAGER = "kubesched-e2e-rbac"


def sa_user(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


def sa_groups(namespace: str) -> list[str]:
    """The groups a ServiceAccount's token authenticates with, besides its user name."""
    return ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]


#: Lines of a kubesched log that mean the API server refused a request: the runtime's ApiError
#: text ("GET /api/v1/...: 403: ..."), the API server's message ("... is forbidden: User ..."),
#: and the informer's "not allowed to list/watch" line. (A bare "403" would also match
#: millisecond timestamps and resourceVersions.)
DENIED = re.compile(r"(?i)forbidden|: 40[13]: |not allowed to|unauthorized")


def denied_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if DENIED.search(line)]


# ---------------------------------------------------------------------------------------------
# the rendered manifests


def load_manifest(name: str) -> list[dict[str, Any]]:
    """The documents of ``runtime/deploy/manifests/<name>``."""
    with open(MANIFESTS / name) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def one(docs: Iterable[Mapping[str, Any]], kind: str) -> dict[str, Any]:
    found = [dict(d) for d in docs if d["kind"] == kind]
    assert len(found) == 1, f"{len(found)} {kind} objects"
    return found[0]


def rbac_documents(docs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The documents to apply, in dependency order (Namespace first); anything else (the
    Deployment, a Service) is left out."""
    out = [copy.deepcopy(dict(d)) for d in docs if d["kind"] in RBAC_KINDS]
    out.sort(key=lambda d: RBAC_KINDS.index(d["kind"]))
    return out


def apply_documents(kube_client: Any, docs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Server-side apply of each document (``kubectl apply --server-side --force-conflicts``)
    with the dynamic client; returns the objects as the API server stored them."""
    dyn = DynamicClient(kube_client)
    out = []
    for doc in docs:
        res = dyn.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        md = doc["metadata"]
        got = dyn.server_side_apply(
            res,
            body=dict(doc),
            name=md["name"],
            namespace=md.get("namespace") if res.namespaced else None,
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
        )
        out.append(got.to_dict())
    return out


# ---------------------------------------------------------------------------------------------
# a token identity


def request_token(core_v1: client.CoreV1Api, namespace: str, name: str, seconds: int = 3600) -> str:
    """A bound token for ServiceAccount ``namespace/name`` (POST .../serviceaccounts/<name>/token),
    for the API server's own audience."""
    body = client.AuthenticationV1TokenRequest(
        spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=seconds)
    )
    tr: Any = core_v1.create_namespaced_service_account_token(name, namespace, body)
    token = tr.status.token
    assert token, "TokenRequest returned no token"
    return str(token)


def write_token_kubeconfig(
    path: Path, *, server: str, ca_file: Path, token: str, user: str
) -> Path:
    """A kubeconfig whose only credential is ``token`` (no client certificate)."""
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "e2e",
                "cluster": {"server": server, "certificate-authority": str(ca_file)},
            }
        ],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "sa", "context": {"cluster": "e2e", "user": user}}],
        "current-context": "sa",
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    path.chmod(0o600)
    return path


def client_for(kubeconfig: Path) -> client.ApiClient:
    return kube_config.new_client_from_config(config_file=str(kubeconfig))


def whoami(api_client: client.ApiClient) -> tuple[str, list[str]]:
    """(username, groups) the API server authenticates ``api_client`` as (SelfSubjectReview)."""
    body: Any = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    review: Any = client.AuthenticationV1Api(api_client).create_self_subject_review(body)
    info = review.status.user_info
    return str(info.username), list(info.groups or [])


# ---------------------------------------------------------------------------------------------
# access reviews


@dataclass(frozen=True)
class Access:
    """One request, as the authorizer sees it (a ResourceAttributes)."""

    verb: str
    resource: str  # "pods", or "pods/binding" for a subresource
    group: str = ""
    namespace: str | None = None  # None: cluster-wide (all namespaces, or a cluster-scoped kind)
    name: str | None = None

    def attributes(self) -> dict[str, Any]:
        resource, _, sub = self.resource.partition("/")
        attrs: dict[str, Any] = {"verb": self.verb, "group": self.group, "resource": resource}
        if sub:
            attrs["subresource"] = sub
        if self.namespace is not None:
            attrs["namespace"] = self.namespace
        if self.name is not None:
            attrs["name"] = self.name
        return attrs

    def __str__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else " cluster-wide"
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        named = f" {self.name!r}" if self.name else ""
        return f"{self.verb} {what}{named}{where}"


def subject_access_review(
    authz: client.AuthorizationV1Api, user: str, groups: list[str], access: Access
) -> tuple[bool, str]:
    """(allowed, reason) for ``user`` in ``groups``, asked by an admin."""
    body: Any = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": user, "groups": groups, "resourceAttributes": access.attributes()},
    }
    st: Any = authz.create_subject_access_review(body).status
    return bool(st.allowed), str(st.reason or st.evaluation_error or "")


def self_subject_access_review(authz: client.AuthorizationV1Api, access: Access) -> bool:
    """Whether the client's own identity may do ``access``."""
    body: Any = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": access.attributes()},
    }
    review: Any = authz.create_self_subject_access_review(body)
    return bool(review.status.allowed)


# ---------------------------------------------------------------------------------------------
# rules


Perm = tuple[str, str, str, str]  # (apiGroup, resource, verb, resourceName or "")


def perms(role: Mapping[str, Any]) -> set[Perm]:
    """Every (apiGroup, resource, verb, resourceName) a Role/ClusterRole's rules grant (the
    object as JSON: camelCase keys)."""
    out: set[Perm] = set()
    for rule in role.get("rules") or []:
        assert not rule.get("nonResourceURLs"), rule
        names = rule.get("resourceNames") or [""]
        for g in rule.get("apiGroups") or []:
            for r in rule.get("resources") or []:
                for v in rule.get("verbs") or []:
                    for n in names:
                        out.add((g, r, v, n))
    return out


# ---------------------------------------------------------------------------------------------
# every version of a namespace's pods


class PodHistory(PodWatchThread):
    """Watches the pods of a namespace from a background thread and keeps every version seen
    (as JSON dicts), by pod name: a victim's status patch is visible here even though the pod is
    deleted right after it."""

    thread_name = "pod-history"

    def __init__(self, core_v1: client.CoreV1Api, namespace: str) -> None:
        super().__init__(core_v1, namespace)
        self.versions: dict[str, list[dict[str, Any]]] = {}
        self.deleted: set[str] = set()

    def of(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.versions.get(name, []))

    def on_pod(self, etype: str, pod: Any) -> None:
        obj = self.core_v1.api_client.sanitize_for_serialization(pod)
        name = str((obj.get("metadata") or {}).get("name"))
        with self._lock:
            self.versions.setdefault(name, []).append(dict(obj))
            if etype == "DELETED":
                self.deleted.add(name)
