"""What the CEL tests share: evaluate a selector on a device, or read its error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from kubesched.runtime.dra.cel import CelError, compile_expression

DRV = "dra.example.com"


def matches(expression: str, device: Mapping[str, Any], driver: str = DRV) -> bool:
    """The selector's result on ``device`` (it must compile)."""
    result = compile_expression(expression)
    assert result.error is None, result.error
    return result.device_matches(driver, device)


def runtime_error(expression: str, device: Mapping[str, Any], driver: str = DRV) -> str:
    """The text of the CelError evaluating the selector on ``device`` raises."""
    with pytest.raises(CelError) as err:
        matches(expression, device, driver)
    return str(err.value)


def compile_error(expression: str) -> str:
    """The text of the selector's compile error (it must have one)."""
    result = compile_expression(expression)
    assert result.error is not None
    return str(result.error)
