"""Pod resource requests for the noderesources plugins.

``resource.PodRequests`` itself, with kube-scheduler's options (pod-level resources,
``UseStatusResources`` for in-place resize, non-missing defaults, overhead), is the SDK's
:func:`kubesched.sdk.objects.requests.pod_requests`, the one implementation that ``Pod.requests``
uses too. Here: Fit's ``computePodResourceRequest``, extended-resource names and the resources
signature for ``sign_pod``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from kubesched.sdk import Pod, Resource, freeze
from kubesched.sdk.objects.requests import (
    is_supported_pod_level_resource,
    pod_requests,
    quantity_value,
)

from .validation import qualified_name_errors

__all__ = [
    "compute_pod_resource_request",
    "is_extended_resource_name",
    "is_supported_pod_level_resource",
    "pod_requests",
    "quantity_value",
    "resources_signature",
]


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: not native (has a ``/`` and is not under
    ``kubernetes.io/``), not ``requests.``-prefixed, and ``requests.<name>`` is a qualified name."""
    if "/" not in name or "kubernetes.io/" in name:
        return False
    if name.startswith("requests."):
        return False
    return _is_qualified(name)


@lru_cache(maxsize=1024)
def _is_qualified(name: str) -> bool:
    return not qualified_name_errors("requests." + name)


def compute_pod_resource_request(pod: Pod, *, pod_level: bool = True) -> Resource:
    """Fit's computePodResourceRequest: ``framework.Resource.SetMaxResource(PodRequests(pod))``.

    Scalar resources (extended, hugepages, ``kubernetes.io/``-prefixed, attachable volumes) are
    kept even when their quantity is zero, as Go's ``ScalarResources`` map keeps them.
    """
    r = Resource()
    for k, v in pod_requests(pod, pod_level=pod_level).items():
        r.add_quantity(k, v)
    return r


def resources_signature(pod: Pod) -> Any:
    """What the resource plugins read of a pod (for ``sign_pod``): the resources of its
    containers, init containers (with their restart policy), overhead and pod-level resources,
    and the (init) container statuses, the pod-level ``status.resources`` /
    ``status.allocatedResources`` and resize conditions (in-place resize)."""
    spec = pod.spec
    status = pod.status
    return freeze((
        [(c.get("name"), c.get("resources")) for c in spec.get("containers") or ()],
        [(c.get("name"), c.get("resources"), c.get("restartPolicy")) for c in spec.get("initContainers") or ()],
        spec.get("overhead"),
        spec.get("resources"),
        status.get("containerStatuses"),
        status.get("initContainerStatuses"),
        status.get("resources"),
        status.get("allocatedResources"),
        [c for c in status.get("conditions") or () if str(c.get("type", "")).startswith("PodResize")],
    ))
