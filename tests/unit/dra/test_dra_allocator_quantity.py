"""The consumed capacity the allocator writes, as kube-scheduler v1.36.3's allocator writes it
(every expected text below is the real Go allocator's output on the same input: its int64
arithmetic for a validRange's step, ``NewQuantity(v, BinarySI)`` for a rounded-up amount, a
request's own format otherwise, and Go's struct ``==`` against the policy's default)."""

from __future__ import annotations

from typing import Any

import pytest
from dra_builders import class_, classA, driverA, node, node1, region1

from kubesched.runtime.dra.allocator import DEFAULT_FEATURES, AllocatedState, Allocator
from kubesched.runtime.dra.allocator.quantity import DECIMAL_EXPONENT, Quantity, format_quantity
from kubesched.runtime.dra.cel import Cache

BIG = str(1 << 62)


def _consumed(cap: str, policy: dict[str, Any] | None, requested: str | None) -> str | None:
    """What one request for capacity "bw" of a shareable device consumes (None: it does not fit)."""
    capacity: dict[str, Any] = {"value": cap}
    if policy is not None:
        capacity["requestPolicy"] = policy
    dev = {"name": "d", "allowMultipleAllocations": True, "capacity": {"bw": capacity}}
    slice_ = {"metadata": {"name": "s"}, "spec": {"driver": driverA, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": node1, "devices": [dev]}}
    exactly: dict[str, Any] = {"deviceClassName": classA, "allocationMode": "ExactCount", "count": 1}
    if requested is not None:
        exactly["capacity"] = {"requests": {"bw": requested}}
    claim = {"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}}
    alloc = Allocator(DEFAULT_FEATURES, AllocatedState(), {classA: class_(classA, driverA)}.get, [slice_], Cache())
    results = alloc.allocate(node(node1, region1), [claim])
    if results is None:
        return None
    got: str = results[0]["devices"]["results"][0]["consumedCapacity"]["bw"]
    return got


@pytest.mark.parametrize(
    ("cap", "policy", "requested", "want"),
    [
        # int64 arithmetic (float division was wrong above 2^53)
        pytest.param(BIG, {"validRange": {"min": "0", "step": "2"}}, str((1 << 54) - 1), "16Pi", id="round up 2^54-1 to step 2"),
        pytest.param(BIG, {"validRange": {"min": "0", "step": "3"}}, "27021597764222978", "27021597764222979", id="round up to step 3 above 2^53"),
        pytest.param(BIG, {"validRange": {"min": "0", "step": "3"}}, "27021597764222979", "27021597764222979", id="a multiple of 3 above 2^53 is valid"),
        pytest.param("1e30", {"validRange": {"min": "0", "step": "4Ei"}}, "7Ei", "-9223372036854775808", id="min + step*n wraps as int64"),
        # rounded up: NewQuantity(v, BinarySI)
        pytest.param("10k", {"validRange": {"min": "1k", "step": "1k"}}, "2500", "3000", id="range rounded up is BinarySI"),
        pytest.param("10k", {"validRange": {"min": "1k", "step": "1Ki"}}, "2000", "2024", id="range rounded up from min"),
        pytest.param("10k", {"validRange": {"min": "1k", "step": "1k"}}, "1e3", "1k", id="range on a step is BinarySI too"),
        pytest.param(BIG, {"validRange": {"min": "0", "step": "2"}}, "2047", "2Ki", id="range rounded up to 2048"),
        pytest.param("10k", {"validRange": {"min": "500m"}}, "0.1", "500m", id="below min is min"),
        # copies keep their representation
        pytest.param("10k", None, "1e3", "1e3", id="exponent kept"),
        pytest.param("10k", None, "1E3", "1E3", id="upper-case exponent kept"),
        pytest.param("10k", None, "+1", "+1", id="plus sign kept"),
        pytest.param("10k", None, "01", "01", id="leading zero kept"),
        pytest.param("10k", None, "1.500", "1.500", id="canonical scale kept"),
        pytest.param("10k", None, "1.5", "1500m", id="non-canonical decimal"),
        pytest.param("10k", None, "1000", "1k", id="trailing zeros"),
        pytest.param("10k", None, "1.953125Ki", "2000", id="fractional binary"),
        pytest.param("10Gi", None, "1024Mi", "1Gi", id="binary canonical"),
        pytest.param("10Gi", None, "1025Ki", "1025Ki", id="binary kept"),
        pytest.param("10", None, "1.0000000001", "1000000001n", id="rounded up to nano"),
        pytest.param("1e30", None, "1000E", "1", id="DecimalSI above E has no suffix"),
        pytest.param("1e30", None, "123456789012345678901", "123456789012345678901", id="big decimal"),
        pytest.param("10k", {"validValues": ["1e3", "2k", "3000"]}, "500", "1e3", id="valid value kept"),
        pytest.param("10k", {"validValues": ["1e3", "2k", "3000"]}, "2500", "3k", id="valid value canonical"),
        pytest.param("1.5Gi", None, None, "1536Mi", id="whole capacity"),
        pytest.param("1e3", None, None, "1e3", id="whole capacity kept"),
        # violatesPolicy compares the default with Go's struct ==
        pytest.param("10k", {"default": "1000", "validRange": {"min": "0", "step": "3"}}, None, "1k", id="default is exempt"),
        pytest.param("10k", {"default": "1.5Ki", "validRange": {"min": "0", "step": "7"}}, None, None, id="big-decimal default is not"),
        pytest.param("10k", {"default": "1.5Ki", "validRange": {"min": "0", "step": "7"}}, "1.5Ki", "1540", id="request equal to default rounds"),
        pytest.param("10k", {"validRange": {"min": "1k", "step": "1k", "max": "2k"}}, "2001", None, id="above max"),
    ],
)
def test_consumed_capacity_is_gos(cap: str, policy: dict[str, Any] | None, requested: str | None, want: str | None) -> None:
    assert _consumed(cap, policy, requested) == want


def test_quantity_keeps_gos_representation() -> None:
    q = Quantity.parse(" 1e3 ")
    assert (q.format, q.text, q.int64, str(q)) == (DECIMAL_EXPONENT, "1e3", (1, 3), "1e3")
    assert Quantity.parse("1000").same_struct(Quantity.parse("1000"))
    assert not Quantity.parse("1000").same_struct(Quantity.parse("1k"))
    assert not Quantity.parse("1.5Ki").same_struct(Quantity.parse("1.5Ki"))
    assert Quantity.parse("1000") == Quantity.parse("1k")
    assert format_quantity(Quantity.parse("1e21").value, DECIMAL_EXPONENT) == "1e21"
