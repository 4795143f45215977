"""``kubesched run`` on a real kube-apiserver with credentials it refuses: a wrong token (401)
and a ServiceAccount without any RBAC rule (403). At the default verbosity the log names the
server and the error once per backoff step, ``/readyz`` stays 503 with the reason on
``/readyz?verbose``, SIGTERM stops it without a false "caches synced" line, and the token never
reaches the log; with good credentials it turns ready."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from e2e_rbac import request_token, write_token_kubeconfig
from e2e_sched import Kubesched, scheduler_config
from helpers import wait_for
from kubernetes import client

STEP = re.compile(r"^(?P<text>.*) \(attempt (?P<step>\d+) failed; retrying in \d+\.\ds\)$")


def messages(ks: Kubesched) -> list[str]:
    return [line.split("] ", 1)[1] for line in ks.log_text().splitlines() if "] " in line]


def steps_of(ks: Kubesched, text: str) -> list[int]:
    """The backoff steps of the log lines saying ``text``."""
    out = []
    for m in messages(ks):
        got = STEP.match(m)
        if got and got["text"] == text:
            out.append(int(got["step"]))
    return out


def unready_then_stopped(ks: Kubesched, reason: str, token: str) -> None:
    assert ks.get("/readyz") == (503, "caches not synced")
    assert ks.get("/readyz?verbose") == (
        503,
        f"[+]ping ok\n[-]informer-sync failed: reason: {reason}\nreadyz check failed\n",
    )
    assert ks.status_of("/healthz") == 200
    assert ks.terminate() == 0
    msgs = messages(ks)
    assert not [m for m in msgs if m.startswith("caches synced")]
    assert f"stopped before the caches synced ({reason})" in msgs
    assert msgs[-1] == "stopped"
    assert token not in ks.log_text()


def test_wrong_token_then_no_rbac_then_good_credentials(
    control_plane: Any,
    core_v1: Any,
    namespace: str,
    test_id: str,
    tmp_path: Path,
    run_kubesched: Callable[..., Kubesched],
) -> None:
    url = control_plane.url
    config = scheduler_config([{"schedulerName": f"kubesched-{test_id}"}])

    # 401: a token the API server does not know
    bad_token = f"not-a-token-{test_id}"
    kc401 = write_token_kubeconfig(
        tmp_path / "kc-401", server=url, ca_file=control_plane.ca_file, token=bad_token, user="wrong"
    )
    ks = run_kubesched(config, kubeconfig=kc401, wait_ready=False, verbosity=0, name="ks-401")
    text = f"401 Unauthorized from the API server at {url}: check the credentials in kubeconfig {kc401}"
    wait_for(lambda: 2 in steps_of(ks, text), timeout=60, message=f"two backoff steps of {text!r}:\n{ks.log_tail()}")
    got = steps_of(ks, text)
    assert got == list(range(1, len(got) + 1))  # once per step, not once per informer
    unready_then_stopped(ks, f"Node, Pod: {text}", bad_token)

    # 403: a ServiceAccount no Role or ClusterRole is bound to
    sa = f"nobody-{test_id}"
    core_v1.create_namespaced_service_account(namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=sa)))
    token = request_token(core_v1, namespace, sa)
    kc403 = write_token_kubeconfig(
        tmp_path / "kc-403", server=url, ca_file=control_plane.ca_file, token=token, user=sa
    )
    ks = run_kubesched(config, kubeconfig=kc403, wait_ready=False, verbosity=0, name="ks-403")

    def denied(kind: str, plural: str) -> str:
        return (
            f"not allowed to list/watch {kind} at {url} (403 Forbidden: {plural} is forbidden: User "
            f'"system:serviceaccount:{namespace}:{sa}" cannot list resource "{plural}" in API group "" at the '
            f"cluster scope): check the RBAC rules of the identity in kubeconfig {kc403}"
        )

    for kind, plural in (("Node", "nodes"), ("Pod", "pods")):
        text = denied(kind, plural)
        wait_for(lambda t=text: 2 in steps_of(ks, t), timeout=60, message=f"two backoff steps of {text!r}")
        got = steps_of(ks, text)
        assert got == list(range(1, len(got) + 1))
    unready_then_stopped(ks, f"Node: {denied('Node', 'nodes')}; Pod: {denied('Pod', 'pods')}", token)

    # the admin kubeconfig: ready, and /readyz?verbose says so
    ks = run_kubesched(config, verbosity=0, name="ks-good")
    assert ks.get("/readyz?verbose") == (200, "[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n")
    assert not [m for m in messages(ks) if STEP.match(m)]
