"""The container image, built by runtime/image/build.sh (debootstrap rootfs + buildah, no base
image pulled), with the contrib plugins baked in.

Marker ``image`` (``-m image`` selects these tests, ``-m "not image"`` deselects them). They are
never skipped: without buildah/debootstrap they are installed with apt-get when running as root;
otherwise, or when not root (build.sh needs root), they fail with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.image

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "runtime" / "image" / "build.sh"
TAG = "localhost/kubesched-test:0.1.0"
BUILDAH = ["buildah", "--storage-driver", "vfs"]
UID = 65532


def _ensure_tools() -> None:
    missing = [t for t in ("buildah", "debootstrap") if shutil.which(t) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        pytest.fail(
            f"{', '.join(missing)} not installed and not running as root: install them "
            f"(apt-get install -y {' '.join(missing)}) or run these tests as root",
            pytrace=False,
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=600)
    subprocess.run(["apt-get", "install", "-y", "-qq", *missing], check=True, env=env, timeout=1200)


def buildah(*args: str, timeout: float = 300) -> str:
    proc = subprocess.run([*BUILDAH, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"buildah {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    if os.geteuid() != 0:
        pytest.fail(
            "runtime/image/build.sh needs root (debootstrap, rootful buildah)", pytrace=False
        )
    _ensure_tools()
    proc = subprocess.run(
        ["bash", str(BUILD), "--tag", TAG, "--with-contrib", "--no-verify"],
        capture_output=True,
        text=True,
        timeout=3600,
        cwd=REPO,
    )
    assert proc.returncode == 0, f"build.sh failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    yield TAG
    subprocess.run([*BUILDAH, "rmi", TAG], capture_output=True)


@pytest.fixture
def container(image: str) -> Iterator[str]:
    ctr = buildah("from", "--quiet", image).strip()
    yield ctr
    subprocess.run([*BUILDAH, "rm", ctr], capture_output=True)


def run_in(ctr: str, *cmd: str, user: str | None = None) -> str:
    """Run in the container, as the image's USER unless ``user`` is given."""
    return buildah(
        "run", "--isolation", "chroot", *(["--user", user] if user else []), ctr, "--", *cmd
    )


def test_image_config(image: str) -> None:
    cfg = json.loads(buildah("inspect", "--type", "image", image))["OCIv1"]["config"]
    assert cfg["User"] == f"{UID}:{UID}"
    assert cfg["Entrypoint"] == ["kubesched", "run"]
    env = dict(e.split("=", 1) for e in cfg["Env"])
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["HOME"] == "/tmp"
    assert env["PATH"].startswith("/opt/kubesched/bin:")
    assert "10251/tcp" in cfg["ExposedPorts"]


def test_version_and_plugins_as_non_root(container: str) -> None:
    out = run_in(container, "sh", "-c", "id -u; id -g; kubesched --version")
    uid, gid, version = out.strip().splitlines()
    assert (int(uid), int(gid)) == (UID, UID)
    assert version == "kubesched 0.1.0"
    plugins = {
        p["name"]: p for p in json.loads(run_in(container, "kubesched", "plugins", "--json"))
    }
    for name in (
        "PrioritySort",
        "NodeResourcesFit",
        "DefaultPreemption",
        "VolumeBinding",
        "DefaultBinder",
    ):
        assert plugins[name]["distribution"] == "kubesched"
    # baked in by --with-contrib: every distribution under plugins-contrib/
    contrib = {
        p.name for p in (REPO / "plugins-contrib").iterdir() if (p / "pyproject.toml").is_file()
    }
    assert contrib <= {p["distribution"] for p in plugins.values()}
    assert plugins["PriorityLabel"]["distribution"] == "kubesched-priority-label"


def test_runs_writing_only_under_tmp(container: str, tmp_path: Path) -> None:
    """With readOnlyRootFilesystem the pod can write only to its /tmp emptyDir: a scheduling run
    in the image must leave every other path untouched (no .pyc, no caches in HOME). It runs as
    root here, so that a write anywhere would succeed and be seen."""
    for name in ("cluster.yaml", "config.yaml"):  # config.yaml adds a PriorityLabel profile
        buildah("copy", container, str(REPO / "examples" / "demo" / name), f"/tmp/{name}")
    mnt = Path(buildah("mount", container).strip())
    # buildah run itself bind-mounts these into the container
    runtime_files = {"/etc/hosts", "/etc/resolv.conf", "/etc/hostname", "/run/.containerenv"}

    def written_since(marker: Path) -> list[str]:
        found = subprocess.run(
            ["find", str(mnt), "-xdev", "-newer", str(marker), "-not", "-type", "d"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        paths = [p[len(str(mnt)) :] for p in found]
        return [p for p in paths if not p.startswith("/tmp/") and p not in runtime_files]

    try:
        marker = tmp_path / "marker"
        marker.touch()
        out = run_in(
            container,
            "kubesched",
            "simulate",
            "/tmp/cluster.yaml",
            "--config",
            "/tmp/config.yaml",
            "-o",
            "json",
            user="0:0",
        )
        summary = json.loads(out)["summary"]
        assert summary["scheduled"] > 0 and summary["errors"] == 0
        assert "priority-label" in summary["profiles"]
        assert run_in(container, "kubesched", "plugins", user="0:0")
        assert written_since(marker) == []
        # the check sees writes: a file written outside /tmp shows up
        run_in(container, "touch", "/opt/kubesched/probe", user="0:0")
        assert written_since(marker) == ["/opt/kubesched/probe"]
    finally:
        buildah("umount", container)
