"""DefaultBinder: binds the pod through the cluster (kube-scheduler's ``defaultbinder``; its
behaviour is unchanged from v1.34 to v1.36.3)."""

from __future__ import annotations

from kubesched.sdk import CycleState, Handle, ObjectConflict, ObjectNotFound, Pod, Status, hookimpl

__all__ = ["DefaultBinder"]


class DefaultBinder:
    name = "DefaultBinder"

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    @hookimpl
    def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        try:
            self.handle.bind_pod(pod, node_name)
        except (ObjectConflict, ObjectNotFound) as e:  # bound already, or gone: never bind twice
            return Status.bind_conflict(str(e) or type(e).__name__, error=e)
        except Exception as e:
            return Status.from_exception(e)
        return None
