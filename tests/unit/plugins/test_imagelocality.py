"""ImageLocality, transcribed from kube-scheduler's
pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go (v1.36.3).

Not transcribed: TestImageSignature (SignPod, v1.35+ pod signatures, which kubesched doesn't have).
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from kubesched.runtime.plugins.imagelocality import ImageLocality, normalized_image_name
from kubesched.sdk import MAX_NODE_SCORE, CycleState, Pod
from kubesched.testing import build_plugin, make_handle

MB = 1024 * 1024


def spec(*images: str, init: tuple[str, ...] = (), volumes: tuple[str, ...] = ()) -> dict[str, Any]:
    s: dict[str, Any] = {"containers": [{"image": i} for i in images]}
    if init:
        s["initContainers"] = [{"image": i} for i in init]
    if volumes:
        s["volumes"] = [{"name": "imageVolume", "image": {"reference": r}} for r in volumes]
    return {"spec": s}


def status(*images: tuple[list[str], int]) -> dict[str, Any]:
    return {"images": [{"names": names, "sizeBytes": size} for names, size in images]}


def make_image_node(name: str, st: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "status": st}


TEST_40_250 = spec("gcr.io/40", "gcr.io/250")
TEST_40_300 = spec("gcr.io/40", "gcr.io/300")
TEST_MIN_MAX = spec("gcr.io/10", "gcr.io/4000")
TEST_300_600_900 = spec("gcr.io/300", "gcr.io/600", "gcr.io/900")
TEST_30_40 = spec("gcr.io/30", "gcr.io/40")
TEST_IMAGE_VOLUME = spec("gcr.io/30", volumes=("gcr.io/300",))
TEST_30_INIT_300 = spec("gcr.io/30", init=("gcr.io/300",))

NODE_40_300_2000 = status(
    (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
    (["gcr.io/2000:latest"], 2000 * MB),
)
NODE_250_10 = status((["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB))
NODE_600_40_900 = status((["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB), (["gcr.io/900:latest"], 900 * MB))
NODE_300_600_900 = status((["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB), (["gcr.io/900:latest"], 900 * MB))
NODE_4000_30 = status((["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB))
NODE_20_30_40 = status((["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB), (["gcr.io/40:latest"], 40 * MB))
NODE_WITH_NO_IMAGES: dict[str, Any] = {}


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"),
    [
        # node1: 40M/2 < 23M, min-threshold -> 0; node2: 100 * (250M/2 - 23M)/(1000M * 2 - 23M) = 5
        pytest.param(
            TEST_40_250,
            [make_image_node("node1", NODE_40_300_2000), make_image_node("node2", NODE_250_10)],
            [("node1", 0), ("node2", 5)],
            id="TestImageLocalityPriority/two images spread on two nodes, prefer the larger image one",
        ),
        # node1: 100 * ((40M + 300M)/2 - 23M)/(1000M * 2 - 23M) = 7; node2: not present -> 0
        pytest.param(
            TEST_40_300,
            [make_image_node("node1", NODE_40_300_2000), make_image_node("node2", NODE_250_10)],
            [("node1", 7), ("node2", 0)],
            id="TestImageLocalityPriority/two images on one node, prefer this node",
        ),
        # node1: 4000M * 1/2 >= 1000M * 2, max-threshold -> 100; node2: 10M/2 < 23M -> 0
        pytest.param(
            TEST_MIN_MAX,
            [make_image_node("node1", NODE_4000_30), make_image_node("node2", NODE_250_10)],
            [("node1", MAX_NODE_SCORE), ("node2", 0)],
            id="TestImageLocalityPriority/if exceed limit, use limit",
        ),
        # node1: 100 * (4000M/3 - 23M)/(1000M * 2 - 23M) = 66; node2: 10M/3 < 23M -> 0; node3: 0
        pytest.param(
            TEST_MIN_MAX,
            [
                make_image_node("node1", NODE_4000_30),
                make_image_node("node2", NODE_250_10),
                make_image_node("node3", NODE_WITH_NO_IMAGES),
            ],
            [("node1", 66), ("node2", 0), ("node3", 0)],
            id="TestImageLocalityPriority/if exceed limit, use limit (with node which has no images present)",
        ),
        # node1: 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32
        # node2: 100 * (300M * 1/3 + 600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 36
        pytest.param(
            TEST_300_600_900,
            [
                make_image_node("node1", NODE_600_40_900),
                make_image_node("node2", NODE_300_600_900),
                make_image_node("node3", NODE_WITH_NO_IMAGES),
            ],
            [("node1", 32), ("node2", 36), ("node3", 0)],
            id="TestImageLocalityPriority/pod with multiple large images, node2 is preferred",
        ),
        # node1: 100 * (30M + 40M * 1/2 - 23M) / (1000M * 2 - 23M) = 1; node2: 100 * (30M - 23M) / ... = 0
        pytest.param(
            TEST_30_40,
            [make_image_node("node1", NODE_20_30_40), make_image_node("node2", NODE_4000_30)],
            [("node1", 1), ("node2", 0)],
            id="TestImageLocalityPriority/pod with multiple small images",
        ),
        # node1: 100 * (300M * 1/2 - 23M) / (1000M - 23M) = 12; node2: 100 * (30M - 23M) / (1000M - 23M) = 0
        pytest.param(
            TEST_IMAGE_VOLUME,
            [make_image_node("node1", NODE_300_600_900), make_image_node("node2", NODE_4000_30)],
            [("node1", 12), ("node2", 0)],
            id="TestImageLocalityPriority/pod with ImageVolume",
        ),
        # node1: 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6; node2: 100 * (30M * 1/2 - 23M) / ... = 0
        pytest.param(
            TEST_30_INIT_300,
            [make_image_node("node1", NODE_40_300_2000), make_image_node("node2", NODE_20_30_40)],
            [("node1", 6), ("node2", 0)],
            id="TestImageLocalityPriority/include InitContainers: two images spread on two nodes, prefer the larger image one",
        ),
    ],
)
def test_image_locality_priority(pod, nodes, expected):
    handle = make_handle(nodes)
    p = build_plugin(ImageLocality, None, handle)
    state = CycleState()
    pod = Pod(pod)
    got = []
    for n in nodes:
        name = n["metadata"]["name"]
        got.append((name, p.score(state, pod, handle.snapshot().get(name))))
    assert got == expected


def get_image_fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(
    ("image", "want"),
    [
        pytest.param("root", "root:latest", id="TestNormalizedImageName/add :latest postfix 1"),
        pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="TestNormalizedImageName/add :latest postfix 2"),
        pytest.param("root:tag", "root:tag", id="TestNormalizedImageName/keep it as is 1"),
        pytest.param(
            "root@" + get_image_fake_digest("root"),
            "root@" + get_image_fake_digest("root"),
            id="TestNormalizedImageName/keep it as is 2",
        ),
    ],
)
def test_normalized_image_name(image, want):
    assert normalized_image_name(image) == want
