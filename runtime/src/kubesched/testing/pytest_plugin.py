"""pytest plugin entry point for kubesched.testing (registered through ``pytest11``)."""

from __future__ import annotations

import pytest

from .handle import make_handle


@pytest.fixture
def kubesched_handle():  # type: ignore[no-untyped-def]
    """A fresh TestHandle with an empty snapshot."""
    return make_handle()
