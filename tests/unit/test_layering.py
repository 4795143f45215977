"""Imports follow the layers: the SDK never imports the runtime, and the simulated cluster and
the object store never load the real cluster's client."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _loaded_after(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.parametrize("module", ["kubesched.runtime.objectstore", "kubesched.runtime.cluster.simulated"])
def test_the_simulated_side_does_not_load_the_kubernetes_client(module: str) -> None:
    loaded = _loaded_after(module)
    assert not {m for m in loaded if m.startswith("kubesched.runtime.cluster.kubernetes")}
    assert "kubernetes" not in loaded


def test_the_sdk_does_not_import_the_runtime() -> None:
    loaded = _loaded_after("kubesched.sdk")
    assert not {m for m in loaded if m.startswith("kubesched.runtime")}
