"""What is wrong with the API server, in words, once per backoff step.

The informers retry every failure for as long as they run. When the server is wrong (nothing
listens, it is not a Kubernetes API server, it refuses the credentials or the RBAC rules) every
informer fails the same way at every step; :class:`ServerProblems` turns that storm into one
line per kind of error and backoff step, naming the server's address and the error (never a
credential), and keeps each resource's last error for ``/readyz?verbose`` and ``explain``.
"""

from __future__ import annotations

import errno
import logging
import socket
import threading
import time
from typing import TYPE_CHECKING

from kubesched.sdk._text import cut, printable

from .errors import ApiError, BadResponse, Forbidden, NotFound, Unauthorized

if TYPE_CHECKING:
    from .api import KubeClient

__all__ = ["ServerProblems", "describe_connection_error"]

log = logging.getLogger("kubesched.kubernetes")

#: how long the answer of the ``GET /api`` probe (after a 404) is reused
_PROBE_TTL = 5.0


def describe_connection_error(e: BaseException) -> str | None:
    """The words for a failure to talk to the server at all (refused, unresolvable, timed out,
    TLS), or None when ``e`` is not one."""
    import urllib3

    seen: set[int] = set()
    cur: BaseException | None = e
    chain: list[BaseException] = []
    while cur is not None and id(cur) not in seen:  # urllib3 wraps the socket error
        seen.add(id(cur))
        chain.append(cur)
        nxt = getattr(cur, "reason", None)
        cur = nxt if isinstance(nxt, BaseException) else (cur.__cause__ or cur.__context__)
    for c in chain:
        if isinstance(c, urllib3.exceptions.SSLError) or type(c).__module__ == "ssl":
            reason = getattr(c, "reason", None) or getattr(c, "verify_message", None)
            detail = str(reason or c)
            if "CERTIFICATE_VERIFY_FAILED" in detail or "certificate verify failed" in detail:
                return f"TLS: the server's certificate is not trusted ({cut(getattr(c, 'verify_message', '') or 'certificate verify failed', 120)})"
            return f"TLS handshake failed ({cut(detail, 120)})"
    # (urllib3's NewConnectionError is a ConnectTimeoutError too: look at the causes first)
    for c in chain:
        if isinstance(c, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(c, ConnectionRefusedError) or getattr(c, "errno", None) == errno.ECONNREFUSED:
            return "connection refused"
    for c in chain:
        if isinstance(c, urllib3.exceptions.ConnectTimeoutError) and not isinstance(c, urllib3.exceptions.NewConnectionError):
            return "timed out connecting"
    for c in chain:
        if isinstance(c, (urllib3.exceptions.ReadTimeoutError, socket.timeout, TimeoutError)):
            return "timed out waiting for an answer"
        if isinstance(c, ConnectionResetError):
            return "connection reset by the server"
    for c in reversed(chain):
        if isinstance(c, OSError) and getattr(c, "strerror", None):
            return printable(c.strerror)
    for c in chain:
        if isinstance(c, (urllib3.exceptions.ProtocolError, urllib3.exceptions.NewConnectionError)):
            return f"the connection failed ({cut(str(c), 120)})"
    return None


class ServerProblems:
    """The failures of a cluster's informers: one log line per kind of error and backoff step,
    and each resource's last error."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        #: set by one-shot commands (explain) that report the error themselves
        self.quiet = False
        self._lock = threading.Lock()
        self._errors: dict[str, tuple[str, str]] = {}  # resource kind -> (error key, text)
        self._logged: dict[str, int] = {}  # error key -> the highest step logged
        self._probe: tuple[float, str | None] | None = None  # (when, text) of GET /api

    # ---------------------------------------------------------------------------------------------
    def failed(self, kind: str, e: BaseException, step: int, delay: float) -> str:
        """Record that listing/watching ``kind`` failed for the ``step``-th time in a row (the
        informer waits ``delay`` seconds before the next try); log it when no resource has
        logged this kind of error at this step yet. Returns the error in words."""
        key, text = self.describe(kind, e)
        with self._lock:
            self._errors[kind] = (key, text)
            emit = step > self._logged.get(key, 0)
            if emit:
                self._logged[key] = step
        if emit and not self.quiet:
            log.error("%s (attempt %d failed; retrying in %.1fs)", text, step, delay)
        return text

    def ok(self, kind: str) -> None:
        """``kind`` was listed (or its watch connected): forget its error; an error no resource
        has any more is logged again from its first step if it comes back."""
        with self._lock:
            if self._errors.pop(kind, None) is None:
                return
            live = {k for k, _ in self._errors.values()}
            for key in [k for k in self._logged if k not in live]:
                del self._logged[key]

    def error_of(self, kind: str) -> str | None:
        got = self._errors.get(kind)
        return got[1] if got is not None else None

    # ---------------------------------------------------------------------------------------------
    def describe(self, kind: str, e: BaseException) -> tuple[str, str]:
        """(key, words) of a list/watch failure: the key groups the failures that are one
        problem of the server (every resource refused alike), the words name the server's
        address and what is wrong."""
        server = printable(self.client.server)
        if isinstance(e, Unauthorized):
            return "401", f"401 Unauthorized from the API server at {server}: check the credentials in {self.client.source}"
        if isinstance(e, Forbidden):
            msg = e.body.get("message") if isinstance(e.body, dict) else None
            return f"403:{kind}", (
                f"not allowed to list/watch {kind} at {server} (403 Forbidden: {cut(msg or e.reason or 'forbidden', 200)}): "
                f"check the RBAC rules of the identity in {self.client.source}"
            )
        if isinstance(e, BadResponse):
            return "not-kubernetes", f"the server at {server} does not look like a Kubernetes API server: {e.method} {printable(e.path)} returned a body that is not JSON"
        if isinstance(e, NotFound):
            wrong = self._not_kubernetes()
            if wrong is not None:
                return "not-kubernetes", f"the server at {server} does not look like a Kubernetes API server: {wrong}"
            return f"404:{kind}", f"cannot list {kind} from the API server at {server}: {cut(e, 200)}"
        if isinstance(e, ApiError):
            msg = e.body.get("message") if isinstance(e.body, dict) else e.body
            return f"{e.status}", f"the API server at {server} answered {e.status} to listing/watching {kind}: {cut(msg, 200)}"
        words = describe_connection_error(e)
        if words is not None:
            return f"conn:{words}", f"cannot reach the API server at {server}: {words}"
        return f"other:{type(e).__name__}", f"listing/watching {kind} at {server} failed: {type(e).__name__}: {cut(e, 200)}"

    def _not_kubernetes(self) -> str | None:
        """Why the server is not a Kubernetes API server (its ``GET /api`` does not answer an
        ``APIVersions``), or None when it is one."""
        now = time.monotonic()
        probe = self._probe
        if probe is not None and now - probe[0] < _PROBE_TTL:
            return probe[1]
        try:
            body = self.client.request("GET", "/api", timeout=10, limit=False)
            why = None if isinstance(body, dict) and body.get("versions") else "GET /api did not return the API versions"
        except ApiError as err:
            why = f"GET /api returned {err.status}"
        except BadResponse:
            why = "GET /api returned a body that is not JSON"
        except Exception:
            why = None  # unreachable now: the next failure says so
        self._probe = (now, why)
        return why
