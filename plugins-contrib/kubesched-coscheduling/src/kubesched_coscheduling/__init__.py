"""Coscheduling: gang scheduling with PodGroups, compatible with kubernetes-sigs/scheduler-plugins.

Pods labelled ``scheduling.x-k8s.io/pod-group: <name>`` form a gang with the PodGroup ``<name>``
(``scheduling.x-k8s.io/v1alpha1``) of their namespace; ``spec.minMember`` of them are bound
together or none is. The PodGroup CRD ships with the package: :func:`podgroup_crd`.
"""

from __future__ import annotations

from .plugin import DEFAULT_WAIT_SECONDS, Coscheduling, CoschedulingArgs, resource_gap
from .podgroup import (
    API_VERSION,
    GROUP,
    KIND,
    POD_GROUP_LABEL,
    PodGroup,
    pod_group_full_name,
    pod_group_name,
    podgroup_crd,
)

__version__ = "0.1.0"

__all__ = [
    "API_VERSION",
    "DEFAULT_WAIT_SECONDS",
    "GROUP",
    "KIND",
    "POD_GROUP_LABEL",
    "Coscheduling",
    "CoschedulingArgs",
    "PodGroup",
    "__version__",
    "pod_group_full_name",
    "pod_group_name",
    "podgroup_crd",
    "resource_gap",
]
