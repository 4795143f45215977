"""Deployment artefacts: the container image (marker ``image``) and the Helm chart."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "image: builds the container image with buildah (runtime/image/build.sh); needs root, "
        "installs buildah and debootstrap with apt-get when missing; select with -m image",
    )


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
