"""`kubesched run` and `explain` against a wrong server, and their setup errors.

Real sockets throughout: a closed port, tiny HTTP servers on threads answering 404 (as
``python -m http.server`` does), 401, 403 or a body that is not JSON. The informers are driven
in-process (their log lines and ``/readyz?verbose`` reasons asserted exactly, one line per kind
of error and backoff step); ``run`` and ``explain`` as subprocesses (exit codes, one-line setup
errors, no false "caches synced", no token in any output).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.runtime.cluster.kubernetes import KubeClient, KubernetesCluster
from kubesched.runtime.cluster.kubernetes.errors import KubeconfigError
from kubesched.runtime.observe.metrics import AddressError, HealthServer, parse_address

TOKEN = "s3cr3t-token-never-logged"
MAIN = "from kubesched.runtime.cli import main; main()"


# ---------------------------------------------------------------------------------------------
# servers and kubeconfigs


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def status_body(code: int, reason: str, message: str) -> bytes:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason, "code": code}).encode()


def forbidden(path: str) -> tuple[int, bytes, str]:
    plural = path.rstrip("/").rsplit("/", 1)[-1]
    msg = f'{plural} is forbidden: User "bob" cannot list resource "{plural}" in API group "" at the cluster scope'
    return 403, status_body(403, "Forbidden", msg), "application/json"


ANSWERS: dict[str, Callable[[str], tuple[int, bytes, str]]] = {
    # python -m http.server's answer to a path it does not serve
    "404": lambda path: (404, b"<html><body><h1>Error response</h1><p>Error code: 404</p></body></html>", "text/html"),
    "401": lambda path: (401, status_body(401, "Unauthorized", "Unauthorized"), "application/json"),
    "403": forbidden,
    "html": lambda path: (200, b"<html>please log in</html>", "text/html"),
}


@pytest.fixture
def server() -> Iterator[Callable[[str], str]]:
    """``server(kind)``: the URL of an HTTP server on a thread answering every GET as ``kind``
    of :data:`ANSWERS` says; the requests' Authorization headers are kept in ``seen``."""
    started: list[ThreadingHTTPServer] = []

    def start(kind: str) -> str:
        answer = ANSWERS[kind]

        class Handler(BaseHTTPRequestHandler):
            # keep-alive, as a real server: a client that reuses its connection is never
            # answered by a reset from a server that closed it (seen on a loaded machine)
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                code, body, ctype = answer(self.path.split("?", 1)[0])
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the listen backlog (5 by default)

        httpd = Server(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        started.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


def write_kubeconfig(path: Path, server: str, *, context: str = "x", current: str = "x") -> Path:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": TOKEN}}],
        "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
        "current-context": current,
    }
    path.write_text(yaml.safe_dump(cfg))
    return path


def wait_until(cond: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# ---------------------------------------------------------------------------------------------
# the informers, in-process: one line per kind of error and backoff step

STEP = re.compile(r"^(?P<text>.*) \(attempt (?P<step>\d+) failed; retrying in \d+\.\ds\)$")


def informer_lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int]]:
    out = []
    for r in caplog.records:
        if r.name == "kubesched.kubernetes" and r.levelno == logging.ERROR:
            m = STEP.match(r.getMessage())
            assert m, r.getMessage()
            out.append((m["text"], int(m["step"])))
    return out


def run_informers(caplog: pytest.LogCaptureFixture, kubeconfig: Path, steps: int) -> tuple[list[tuple[str, int]], KubernetesCluster]:
    """Start the Node and Pod informers against ``kubeconfig``'s server until ``steps`` backoff
    steps were logged; the log lines (text, step) and the cluster (stopped)."""
    caplog.set_level(logging.INFO, logger="kubesched.kubernetes")
    cluster = KubernetesCluster(KubeClient(str(kubeconfig)))
    assert list(cluster.informers) == ["Node", "Pod"]
    cluster.start_informers()
    try:
        wait_until(lambda: any(step >= steps for _, step in informer_lines(caplog)), f"backoff step {steps}")
        assert not cluster.synced()
        return informer_lines(caplog), cluster
    finally:
        cluster.stop(flush=0)


def one_line_per_step(lines: list[tuple[str, int]], text: str) -> None:
    """Every line is ``text``, and each backoff step is logged once (two informers failed)."""
    assert {t for t, _ in lines} == {text}
    steps = [s for _, s in lines]
    assert steps == list(range(1, len(steps) + 1))


def test_closed_port_logged_once_per_step_with_the_address(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    port = closed_port()
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    lines, cluster = run_informers(caplog, kc, 2)
    text = f"cannot reach the API server at http://127.0.0.1:{port}: connection refused"
    one_line_per_step(lines, text)
    assert cluster.not_ready_reason() == f"Node, Pod: {text}"
    assert TOKEN not in caplog.text


def test_http_server_answering_404_is_not_kubernetes(caplog: pytest.LogCaptureFixture, tmp_path: Path, server: Callable[[str], str]) -> None:
    url = server("404")
    lines, cluster = run_informers(caplog, write_kubeconfig(tmp_path / "kc", url), 2)
    text = f"the server at {url} does not look like a Kubernetes API server: GET /api returned 404"
    one_line_per_step(lines, text)
    assert cluster.not_ready_reason() == f"Node, Pod: {text}"


def test_server_answering_html_is_not_kubernetes(caplog: pytest.LogCaptureFixture, tmp_path: Path, server: Callable[[str], str]) -> None:
    url = server("html")
    lines, _ = run_informers(caplog, write_kubeconfig(tmp_path / "kc", url), 2)
    texts = {t for t, _ in lines}
    assert texts <= {
        f"the server at {url} does not look like a Kubernetes API server: GET /api/v1/nodes returned a body that is not JSON",
        f"the server at {url} does not look like a Kubernetes API server: GET /api/v1/pods returned a body that is not JSON",
    }
    assert [s for _, s in lines] == list(range(1, len(lines) + 1))


def test_401_names_the_kubeconfig_never_the_token(caplog: pytest.LogCaptureFixture, tmp_path: Path, server: Callable[[str], str]) -> None:
    url = server("401")
    kc = write_kubeconfig(tmp_path / "kc", url)
    lines, cluster = run_informers(caplog, kc, 2)
    text = f"401 Unauthorized from the API server at {url}: check the credentials in kubeconfig {kc}"
    one_line_per_step(lines, text)
    assert cluster.not_ready_reason() == f"Node, Pod: {text}"
    assert TOKEN not in caplog.text


def test_403_one_line_per_resource_and_step(caplog: pytest.LogCaptureFixture, tmp_path: Path, server: Callable[[str], str]) -> None:
    url = server("403")
    kc = write_kubeconfig(tmp_path / "kc", url)
    lines, cluster = run_informers(caplog, kc, 2)

    def text(kind: str, plural: str) -> str:
        return (
            f'not allowed to list/watch {kind} at {url} (403 Forbidden: {plural} is forbidden: User "bob" cannot list resource '
            f'"{plural}" in API group "" at the cluster scope): check the RBAC rules of the identity in kubeconfig {kc}'
        )

    for kind, plural in (("Node", "nodes"), ("Pod", "pods")):
        steps = [s for t, s in lines if t == text(kind, plural)]
        assert steps == list(range(1, len(steps) + 1)) and steps, lines
    assert {t for t, _ in lines} <= {text("Node", "nodes"), text("Pod", "pods")}
    assert cluster.not_ready_reason() == f"Node: {text('Node', 'nodes')}; Pod: {text('Pod', 'pods')}"


def test_an_error_that_cleared_is_logged_again_from_step_one(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    """The server comes back (the informers list), then goes away again: the first failure
    after that is logged again, as step 1."""
    from kubesched.runtime.cluster.kubernetes.problems import ServerProblems

    port = closed_port()
    client = KubeClient(str(write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")))
    problems = ServerProblems(client)
    caplog.set_level(logging.INFO, logger="kubesched.kubernetes")
    err = ConnectionRefusedError(111, "Connection refused")
    for step in (1, 2):
        problems.failed("Node", err, step, 0.5)
        problems.failed("Pod", err, step, 0.5)
    problems.ok("Node")
    problems.failed("Pod", err, 3, 1.0)  # still failing: its step goes on
    problems.ok("Pod")
    problems.failed("Node", err, 1, 0.5)
    text = f"cannot reach the API server at http://127.0.0.1:{port}: connection refused"
    assert [r.getMessage() for r in caplog.records] == [
        f"{text} (attempt 1 failed; retrying in 0.5s)",
        f"{text} (attempt 2 failed; retrying in 0.5s)",
        f"{text} (attempt 3 failed; retrying in 1.0s)",
        f"{text} (attempt 1 failed; retrying in 0.5s)",
    ]
    assert problems.error_of("Node") == text and problems.error_of("Pod") is None


# ---------------------------------------------------------------------------------------------
# /readyz


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_readyz_verbose_lists_the_checks_as_kube_apiserver() -> None:
    state = {"ready": False, "why": "Node, Pod: cannot reach the API server at http://127.0.0.1:1: connection refused\x1b[2J"}
    hs = HealthServer("127.0.0.1:0", None, ready=lambda: bool(state["ready"]), reason=lambda: str(state["why"]))
    try:
        base = f"http://127.0.0.1:{hs.port}"
        assert get(base + "/readyz") == (503, "caches not synced")
        assert get(base + "/readyz?verbose") == (
            503,
            "[+]ping ok\n"
            "[-]informer-sync failed: reason: Node, Pod: cannot reach the API server at http://127.0.0.1:1: connection refused\\x1b[2J\n"
            "readyz check failed\n",
        )
        state["ready"] = True
        assert get(base + "/readyz") == (200, "ok")
        assert get(base + "/readyz?verbose=true") == (200, "[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n")
    finally:
        hs.stop()


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("foo", '"foo": expected HOST:PORT, such as 0.0.0.0:10251'),
        ("127.0.0.1:", '"127.0.0.1:": expected HOST:PORT, such as 0.0.0.0:10251'),
        ("127.0.0.1:-1", '"127.0.0.1:-1": expected HOST:PORT, such as 0.0.0.0:10251'),
        ("127.0.0.1:99999", '"127.0.0.1:99999": port 99999 is out of range (0-65535)'),
        ("127.0.0.1:1\x1b[2J", '"127.0.0.1:1\\x1b[2J": expected HOST:PORT, such as 0.0.0.0:10251'),
    ],
)
def test_bad_address(address: str, message: str) -> None:
    with pytest.raises(AddressError) as e:
        parse_address(address)
    assert str(e.value) == message


def test_port_in_use() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        with pytest.raises(AddressError) as e:
            HealthServer(f"127.0.0.1:{port}", None, ready=lambda: True)
        assert str(e.value) == f'"127.0.0.1:{port}": address already in use (another process listens on this port)'
    finally:
        s.close()


# ---------------------------------------------------------------------------------------------
# kubeconfig errors


def kubeconfig_error(path: str | None, env: dict[str, str] | None = None) -> str:
    old = dict(os.environ)
    try:
        os.environ.pop("KUBERNETES_SERVICE_HOST", None)
        os.environ.update(env or {})
        with pytest.raises(KubeconfigError) as e:
            KubeClient(path)
        return str(e.value)
    finally:
        os.environ.clear()
        os.environ.update(old)


def test_kubeconfig_errors_are_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    assert kubeconfig_error(str(missing)) == f"kubeconfig {missing}: no such file"
    assert kubeconfig_error(None, {"KUBECONFIG": str(tmp_path)}) == f"kubeconfig {tmp_path}: is a directory"
    garbage = tmp_path / "garbage"
    garbage.write_text("just some words\n")
    assert kubeconfig_error(str(garbage)) == f"kubeconfig {garbage}: not a kubeconfig (expected a mapping with clusters, contexts and users; got a str)"
    empty = tmp_path / "empty"
    empty.write_text("")
    assert kubeconfig_error(str(empty)) == f"kubeconfig {empty}: not a kubeconfig (expected a mapping with clusters, contexts and users; got an empty file)"
    bad_yaml = tmp_path / "bad-yaml"
    bad_yaml.write_text(f"users: [{{token: {TOKEN}}}\n")
    assert kubeconfig_error(str(bad_yaml)) == f"kubeconfig {bad_yaml}: not valid YAML at line 2, column 1"
    binary = tmp_path / "binary"
    binary.write_bytes(b"\x00\xff\xfe" * 10)
    assert kubeconfig_error(str(binary)).startswith(f"kubeconfig {binary}: not valid YAML")
    no_ctx = write_kubeconfig(tmp_path / "no-ctx", "https://127.0.0.1:6443", current="nope")
    assert kubeconfig_error(str(no_ctx)) == f"kubeconfig {no_ctx}: Invalid kube-config file. Expected object with name nope in {no_ctx}/contexts list"
    home = tmp_path / "home"
    home.mkdir()
    assert kubeconfig_error(None, {"HOME": str(home), "KUBECONFIG": ""}) == (
        "no kubeconfig: ~/.kube/config does not exist, KUBECONFIG is not set and this is not a pod; give --kubeconfig or clientConnection.kubeconfig"
    )


# ---------------------------------------------------------------------------------------------
# the commands, as subprocesses


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    e = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True, env=e, timeout=timeout, stdin=subprocess.DEVNULL)


def test_run_setup_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{closed_port()}")
    home = tmp_path / "home"
    home.mkdir()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    busy = s.getsockname()[1]
    try:
        cases = [
            (["--kubeconfig", str(tmp_path / "nope")], {}, f"kubeconfig {tmp_path / 'nope'}: no such file"),
            ([], {"HOME": str(home), "KUBECONFIG": ""}, "no kubeconfig: ~/.kube/config does not exist, KUBECONFIG is not set and this is not a pod; give --kubeconfig or clientConnection.kubeconfig"),
            (["--kubeconfig", str(kc), "--address", "foo"], {}, '--address "foo": expected HOST:PORT, such as 0.0.0.0:10251'),
            (["--kubeconfig", str(kc), "--address", f"127.0.0.1:{busy}"], {}, f'--address "127.0.0.1:{busy}": address already in use (another process listens on this port)'),
        ]
        for args, env, message in cases:
            r = cli("run", *args, env=env)
            assert (r.returncode, r.stdout, r.stderr) == (2, "", f"kubesched: error: {message}\n"), args
    finally:
        s.close()


def test_run_against_a_closed_port_logs_stays_unready_and_stops_without_a_false_synced(tmp_path: Path) -> None:
    port = closed_port()
    kc = write_kubeconfig(tmp_path / "kc", f"http://127.0.0.1:{port}")
    log_path = tmp_path / "run.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", MAIN, "run", "--kubeconfig", str(kc), "--address", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )
    try:
        text = f"cannot reach the API server at http://127.0.0.1:{port}: connection refused"
        wait_until(lambda: "(attempt 2 failed" in log_path.read_text(), "the second backoff step", 60)
        served = re.search(r"serving /healthz /livez /readyz /metrics on 127\.0\.0\.1:(\d+)", log_path.read_text())
        assert served
        base = f"http://127.0.0.1:{served[1]}"
        assert get(base + "/healthz") == (200, "ok")
        assert get(base + "/readyz") == (503, "caches not synced")
        status, body = get(base + "/readyz?verbose")
        assert status == 503
        lines = body.splitlines()
        assert lines[0] == "[+]ping ok" and lines[2] == "readyz check failed"
        assert lines[1].startswith("[-]informer-sync failed: reason: Node, Pod, ") and lines[1].endswith(f": {text}")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = log_path.read_text()
    msgs = [line.split("] ", 1)[1] for line in out.splitlines() if "] " in line]
    errors = [m for m in msgs if m.startswith(text)]
    matches = [STEP.match(m) for m in errors]
    assert [m["step"] if m else m for m in matches] == [str(i) for i in range(1, len(errors) + 1)]
    assert f"connecting to the API server at http://127.0.0.1:{port} (credentials from kubeconfig {kc})" in msgs
    assert not [m for m in msgs if m.startswith("caches synced")]
    assert next(m for m in msgs if m.startswith("stopped before the caches synced (")).endswith(f": {text})")
    assert msgs[-1] == "stopped"
    assert TOKEN not in out


@pytest.mark.parametrize("kind", ["closed", "404", "401"])
def test_explain_fails_fast_with_the_server_error(kind: str, tmp_path: Path, server: Callable[[str], str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}" if kind == "closed" else server(kind)
    kc = write_kubeconfig(tmp_path / "kc", url)
    r = cli("explain", "default/x", "--kubeconfig", str(kc))
    why = {
        "closed": f"cannot reach the API server at {url}: connection refused",
        "404": f"the server at {url} does not look like a Kubernetes API server: GET /api returned 404",
        "401": f"401 Unauthorized from the API server at {url}: check the credentials in kubeconfig {kc}",
    }[kind]
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"kubesched: error: cannot read the cluster: {why}\n")


def test_explain_kubeconfig_error_is_one_line(tmp_path: Path) -> None:
    r = cli("explain", "x", "--kubeconfig", str(tmp_path / "nope"))
    assert (r.returncode, r.stdout, r.stderr) == (2, "", f"kubesched: error: kubeconfig {tmp_path / 'nope'}: no such file\n")


def test_log_lines_escape_control_characters(caplog: pytest.LogCaptureFixture) -> None:
    from kubesched.runtime.observe.logging import JsonFormatter, TextFormatter

    rec = logging.LogRecord("kubesched", logging.INFO, __file__, 1, "bound pod %s", ("ns/evil\x1b[2J\nI0101 forged",), None)
    assert TextFormatter("%(message)s").format(rec) == "bound pod ns/evil\\x1b[2J\\nI0101 forged"
    assert json.loads(JsonFormatter().format(rec))["msg"] == "bound pod ns/evil\x1b[2J\nI0101 forged"  # JSON escapes it


def test_lease_refused_is_logged_at_the_default_verbosity(caplog: pytest.LogCaptureFixture, tmp_path: Path, server: Callable[[str], str]) -> None:
    """A forbidden Lease (RBAC without leases) was a debug line only: the elector waited
    silently for ever."""
    from kubesched.runtime.leaderelection import LeaderElector

    url = server("403")
    client = KubeClient(str(write_kubeconfig(tmp_path / "kc", url)))
    elector = LeaderElector(client, namespace="kube-system", name="ks", identity="me", retry_period=0.05)
    caplog.set_level(logging.INFO, logger="kubesched.leaderelection")
    stop = threading.Event()
    t = threading.Thread(target=elector.run, args=(stop, lambda: None, lambda: None), daemon=True)
    t.start()
    try:
        wait_until(lambda: len(caplog.records) >= 2, "two lines")
    finally:
        stop.set()
        t.join(30)
    what = f"acquiring lease kube-system/ks at {url}: 403: "
    msg = 'ks is forbidden: User "bob" cannot list resource "ks" in API group "" at the cluster scope'
    assert [r.getMessage() for r in caplog.records[:2]] == [
        f"{what}{msg} (attempt 1 failed; retrying every 0.1s)",
        f"{what}{msg} (attempt 31 failed; retrying every 0.1s)",
    ]
