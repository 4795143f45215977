"""The plugin contract at run time: what a hook may return, and the Error a pod gets otherwise.

Every message names the plugin, the hook, what it returned and what the SDK's table
(:func:`kubesched.sdk.points.hook_info`) says the hook may return::

    plugin "Foo" hook score returned float 42.5; expected an int (or an (int, Status) tuple)

The runners call these helpers only off their fast paths (a plain int from Score, None or a
Status from the others), so a plugin that keeps the contract pays nothing for the checks.
"""

from __future__ import annotations

import operator
import reprlib
from typing import Any

from kubesched.sdk import Code, Status
from kubesched.sdk.points import hook_info

from ..timefmt import go_duration
from .waiting import MAX_PERMIT_TIMEOUT

__all__ = [
    "SUCCESS",
    "contract_error",
    "filter_verdict",
    "normalized_out",
    "permit_out",
    "plugin_error",
    "score_out",
    "split_result",
]

#: the shared Success status the runners return
SUCCESS = Status()

_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60


def describe(value: Any) -> str:
    """``None``, or the type and a short repr of ``value`` (``float 42.5``)."""
    if value is None:
        return "None"
    return f"{type(value).__name__} {_repr.repr(value)}"


def contract_error(plugin: str, hook: str, got: Any, *, node: str | None = None) -> Status:
    """The Error for a return value that ``hook``'s contract does not allow (``node``: the
    node of a batch form's item)."""
    where = f' for node "{node}"' if node is not None else ""
    return Status(
        Code.ERROR,
        f'plugin "{plugin}" hook {hook} returned {describe(got)}{where}; expected {hook_info(hook).returns}',
        plugin=plugin,
    )


def split_result(out: Any, result_type: type) -> tuple[Any, Status]:
    """A PreFilter/PostFilter return value (None, a Status, a result, or a (result or None,
    Status or None) pair) as (result or None, Status); TypeError for anything else."""
    if out is None:
        return None, SUCCESS
    if isinstance(out, Status):
        return None, out
    if isinstance(out, result_type):
        return out, SUCCESS
    if isinstance(out, tuple) and len(out) == 2:
        r, s = out
        if (r is None or isinstance(r, result_type)) and (s is None or isinstance(s, Status)):
            return r, (s if s is not None else SUCCESS)
    raise TypeError(f"unexpected return value {out!r}")


def _score_err(name: str, st: Status) -> Status:
    return Status(Code.ERROR, f'running Score plugins: plugin "{name}" failed with: {st.message}', plugin=name)


def _integer(v: Any) -> int | None:
    """``v`` as an int when it is an integer (an int subclass, numpy.int64, ...), not a bool."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def score_out(name: str, out: Any) -> int | Status:
    """A Score return value that is not a plain ``int``: the score, or the Error for the pod
    (the plugin's own non-success Status, or a contract violation)."""
    if isinstance(out, Status):
        return 0 if out.code is Code.SUCCESS else _score_err(name, out)
    if isinstance(out, tuple) and len(out) == 2:
        sc, st = out
        v = _integer(sc)
        if v is not None and (st is None or isinstance(st, Status)):
            if st is not None and st.code is not Code.SUCCESS:
                return _score_err(name, st)
            return v
        return contract_error(name, "score", out)
    v = _integer(out)
    return contract_error(name, "score", out) if v is None else v


def normalized_out(name: str, scores: list[Any]) -> list[int] | Status:
    """The scores after ``name``'s NormalizeScore, which sets each ``NodeScore.score`` in place
    to an int: the values (an integer such as numpy.int64 as an int), or the Error for the pod."""
    vals = [x.score for x in scores]
    if all(type(v) is int for v in vals):
        return vals
    out: list[int] = []
    for x, v in zip(scores, vals):
        i = _integer(v)
        if i is None:
            return Status(
                Code.ERROR,
                f'plugin "{name}" hook normalize_score set the score of node "{x.name}" to {describe(v)}; expected an int',
                plugin=name,
            )
        out.append(i)
    return out


def permit_out(name: str, out: Any) -> tuple[Status, float] | Status:
    """A Permit return value as (status, timeout in seconds), or the Error for the pod.

    A Wait needs a timeout above 0 (kube-scheduler's Permit returns one with every Wait);
    timeouts above :data:`MAX_PERMIT_TIMEOUT` are capped to it."""
    timeout: Any = None
    if isinstance(out, tuple) and len(out) == 2:
        st, timeout = out
        if st is None:
            st = SUCCESS
    else:
        st = out
    if not isinstance(st, Status) or (
        timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)))
    ):
        return contract_error(name, "permit", out)
    if st.code is not Code.WAIT:
        return st, 0.0
    if timeout is None or not timeout > 0:  # also NaN
        got = "without a timeout" if timeout is None else f"with timeout {timeout!r}"
        return Status(
            Code.ERROR,
            f'plugin "{name}" hook permit returned Wait {got}; a Wait needs a timeout above 0 seconds, '
            f"as (Status.wait(), seconds) (capped at {go_duration(MAX_PERMIT_TIMEOUT)})",
            plugin=name,
        )
    return st, min(float(timeout), MAX_PERMIT_TIMEOUT)


def filter_verdict(name: str, st: Any, *, batch_node: str | None = None) -> Status:
    """A Filter plugin's return value other than None or Success, as the framework reports it:
    rejections keep their code and reasons, another Status becomes an Error naming the plugin,
    anything but a Status is a contract Error (``batch_node``: the item of filter_batch for
    that node)."""
    if not isinstance(st, Status):
        if batch_node is not None:
            return contract_error(name, "filter_batch", st, node=batch_node)
        return contract_error(name, "filter", st)
    if not st.is_rejected():
        st = Status(Code.ERROR, f'running "{name}" filter plugin: {st.message}', error=st.error)
    st.plugin = name
    return st


def plugin_error(point: str, plugin: str, e: BaseException) -> Status:
    """The Error for an exception raised by ``plugin`` at ``point``."""
    return Status(Code.ERROR, f'running {point} plugin "{plugin}": {type(e).__name__}: {e}', plugin=plugin, error=e)
