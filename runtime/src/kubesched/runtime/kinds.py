"""Facts about kinds that the simulated cluster, the object store and the real cluster's client
share: the one definition of the cluster-scoped kinds."""

from __future__ import annotations

__all__ = ["CLUSTER_SCOPED_KINDS", "RESOURCE_API_VERSION", "RESOURCE_KINDS"]

#: the API version of dynamic resource allocation (GA since Kubernetes 1.34)
RESOURCE_API_VERSION = "resource.k8s.io/v1"

#: kind -> plural of the kinds of ``resource.k8s.io/v1`` (k8s.io/api resource/v1 register.go)
RESOURCE_KINDS: dict[str, str] = {
    "DeviceClass": "deviceclasses",
    "ResourceClaim": "resourceclaims",
    "ResourceClaimTemplate": "resourceclaimtemplates",
    "ResourceSlice": "resourceslices",
}

#: Kinds whose objects have no namespace. Built-in ones, and those of the API groups plugins
#: commonly read (CRDs, RBAC, DRA), so the simulated cluster keys them as a real one does.
CLUSTER_SCOPED_KINDS = frozenset(
    {
        "Node",
        "Namespace",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "PriorityClass",
        "VolumeAttachment",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "DeviceClass",
        "ResourceSlice",
    }
)
