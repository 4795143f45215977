"""ImageLocality: favour nodes that already have the pod's container images.

Ported from kube-scheduler ``pkg/scheduler/framework/plugins/imagelocality/image_locality.go`` at
Kubernetes v1.36.3 (Go module ``k8s.io/kubernetes@v1.36.3``): images of init containers, containers
and image volumes (the volumes are new in v1.36, kubernetes#130231) count, each scaled by the share
of nodes that have it; the threshold counts containers and init containers only.

``sign_pod`` follows v1.36's SignPod (the sorted, normalized image names of the containers and init
containers, ``ImageNamesSignerName``) and adds what Score also reads, which Go leaves to other
plugins' signers: the image volumes' names, each name as often as it occurs, and the number of
containers.

Image sizes and the number of nodes that have each image come from ``NodeInfo.image_states``,
which the runtime fills from ``node.status.images``, keyed by every name an image has there.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.sdk import (
    MAX_NODE_SCORE,
    CycleState,
    ImageStateSummary,
    NodeColumns,
    NodeInfo,
    Pod,
    hookimpl,
)

__all__ = ["ImageLocality", "normalized_image_name"]

_MB = 1024 * 1024
#: The image score bounds: a reasonable size range for compressed images in registries.
MIN_THRESHOLD = 23 * _MB
MAX_CONTAINER_THRESHOLD = 1000 * _MB

#: CycleState key under which Score keeps the pod's normalized image names for the cycle.
_IMAGES_STATE_KEY = "Score/ImageLocality/images"


def normalized_image_name(name: str) -> str:
    """The CRI-compliant name: ``:latest`` is added when there is no tag after the last ``/``."""
    if name.rfind(":") <= name.rfind("/"):
        name += ":latest"
    return name


def _pod_images(pod: Pod) -> tuple[tuple[str, ...], int]:
    """Normalized names of the images of the init containers, containers and image volumes,
    and the number of containers (init containers included)."""
    init, containers = pod.init_containers, pod.containers
    names = [normalized_image_name(str(c.get("image") or "")) for c in init]
    names += [normalized_image_name(str(c.get("image") or "")) for c in containers]
    for v in pod.volumes:
        image = v.get("image")
        if isinstance(image, Mapping):
            names.append(normalized_image_name(str(image.get("reference") or "")))
    return tuple(names), len(init) + len(containers)


def scaled_image_score(image_state: ImageStateSummary, total_num_nodes: int) -> int:
    """The image size scaled by the share of nodes that have it (against "node heating")."""
    spread = image_state.num_nodes / total_num_nodes
    return int(image_state.size * spread)


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Scale the sum of image scores, clamped to [23MB, 1000MB * containers], to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return _go_div(MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD), max_threshold - MIN_THRESHOLD)


def _go_div(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


#: how many image names the column form remembers (cleared when full)
_FIRST_CACHE_SIZE = 1024


class ImageLocality:
    """Score: the sum of the scaled sizes of the pod's images present on the node."""

    name = "ImageLocality"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        #: image name -> (its column, the first row that has it or -1), for the column form
        self._first: dict[str, tuple[Any, int]] = {}

    @hookimpl
    def sign_pod(self, pod: Pod) -> Hashable:
        # Score also reads how many nodes have each image: the framework does not reuse
        # results across a change of the node set or of a node's images. The sum does not
        # depend on the order of the names.
        names, num_containers = _pod_images(pod)
        return tuple(sorted(names)), num_containers

    def _images(self, state: CycleState, pod: Pod) -> tuple[tuple[str, ...], int]:
        images = state.get(_IMAGES_STATE_KEY)
        if images is None:  # first call of the cycle: normalize the pod's image names once
            images = _pod_images(pod)
            state.write(_IMAGES_STATE_KEY, images)
        return images  # type: ignore[no-any-return]

    @hookimpl
    def score_batch(self, state: CycleState, pod: Pod, nodes: Sequence[NodeInfo]) -> list[int]:
        total_num_nodes = len(self.handle.snapshot().list())
        names, num_containers = self._images(state, pod)
        return [_node_score(ni, names, num_containers, total_num_nodes) for ni in nodes]

    @hookimpl
    def score_columns(self, state: CycleState, pod: Pod, columns: NodeColumns, rows: Any) -> Any:
        names, num_containers = self._images(state, pod)
        if num_containers == 0:
            return None  # the threshold is 0 (below the minimum): left to the per-node form
        present = []
        first = self._first
        for name in names:
            sizes = columns.image(name)
            got = first.get(name)
            if got is None or got[0] is not sizes:
                # the column is kept until a node changes: where the image is, looked up once
                has = np.flatnonzero(sizes >= 0)
                if len(first) >= _FIRST_CACHE_SIZE:
                    first.clear()
                got = first[name] = (sizes, int(has[0]) if len(has) else -1)
            if got[1] >= 0:
                present.append((name, sizes, got[1]))
        if not present:
            # no node has any of the pod's images: every node scores the minimum
            return np.full(len(rows), calculate_priority(0, num_containers), np.int64)
        total_num_nodes = len(self.handle.snapshot().list())
        infos = columns.infos
        total = np.zeros(len(rows), np.int64)
        for name, sizes, row in present:
            # every node that has the image shares its summary (the cache's, and the snapshot's):
            # the share of nodes that have it is one number per image
            st = infos[row].image_states[name]
            spread = st.num_nodes / total_num_nodes
            got_sizes = sizes[rows]
            # int(size * spread) in float64, truncated as Go's int64() conversion
            total += np.where(got_sizes >= 0, (got_sizes.astype(np.float64) * spread).astype(np.int64), np.int64(0))
        max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
        clamped = np.clip(total, MIN_THRESHOLD, max_threshold)
        return (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // (max_threshold - MIN_THRESHOLD)

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        names, num_containers = self._images(state, pod)
        return _node_score(node_info, names, num_containers, len(self.handle.snapshot().list()))


def _node_score(node_info: NodeInfo, names: tuple[str, ...], num_containers: int, total_num_nodes: int) -> int:
    image_states = node_info.image_states
    total = 0
    if image_states:
        for name in names:
            st = image_states.get(name)
            if st is not None:
                total += scaled_image_score(st, total_num_nodes)
    return calculate_priority(total, num_containers)
