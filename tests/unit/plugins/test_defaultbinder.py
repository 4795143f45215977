"""DefaultBinder, transcribed from kube-scheduler's defaultbinder/default_binder_test.go
(TestDefaultBinder: "successful" and "binding error"), with a recording handle standing in for
the fake clientset."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.runtime.plugins.defaultbinder import DefaultBinder
from kubesched.sdk import Code, CycleState, Pod
from kubesched.testing import make_pod

NODE = "foohost.kubernetes.mydomain.com"


class RecordingHandle:
    def __init__(self, inject: Exception | None) -> None:
        self.inject = inject
        self.bindings: list[tuple[str, str, str]] = []

    def bind_pod(self, pod: Pod, node_name: str) -> None:
        if self.inject is not None:
            raise self.inject
        self.bindings.append((pod.namespace, pod.name, node_name))


@pytest.mark.parametrize(
    ("inject", "want"),
    [
        pytest.param(None, [("ns", "foo", NODE)], id="TestDefaultBinder/successful"),
        pytest.param(RuntimeError("binding error"), [], id="TestDefaultBinder/binding error"),
    ],
)
def test_default_binder(inject: Exception | None, want: list[Any]) -> None:
    handle = RecordingHandle(inject)
    pod = Pod(make_pod().name("foo").namespace("ns").obj())
    st = DefaultBinder(handle).bind(CycleState(), pod, NODE)  # type: ignore[arg-type]
    if inject is None:
        assert st is None or st.is_success()
    else:
        assert st is not None and st.code is Code.ERROR
        assert "binding error" in st.message
    assert handle.bindings == want
