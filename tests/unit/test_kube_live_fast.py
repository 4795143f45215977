"""KubeClient's direct write path (api.py): writes go over the pool's own connections without
http.client. A scripted server on a real socket answers each request with the bytes a test
gives (keep-alive, Content-Length, chunked, a body ending with the connection, a close, a 1xx),
and records what it received on which connection."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.runtime.cluster.kubernetes import Conflict, KubeClient, NotFound, ServerError
from kubesched.runtime.cluster.kubernetes.errors import ApiError, BadResponse, retryable
from kubesched.runtime.cluster.kubernetes.writers import Writer
from kubesched.sdk import Pod

TOKEN = "t0ken"


def ok(body: bytes, status: str = "201 Created", extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


class Scripted:
    """Answers the n-th request with ``answers[n]`` (bytes; b"" closes the connection without
    answering; a list of bytes is sent piece by piece, a moment apart, so that the client reads
    them apart); after an answer whose script says ``close``, closes the connection."""

    def __init__(self, answers: list[tuple[Any, bool]]) -> None:
        self.answers = answers
        self.seen: list[tuple[int, bytes, bytes]] = []  # (connection number, head, body)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.conns += 1
            threading.Thread(target=self._serve, args=(c, self.conns), daemon=True).start()

    def _serve(self, c: socket.socket, n: int) -> None:
        buf = b""
        with c:
            while True:
                while b"\r\n\r\n" not in buf:
                    chunk = c.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = next((int(ln.split(b":", 1)[1]) for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")), 0)
                while len(buf) < length:
                    buf += c.recv(65536)
                body, buf = buf[:length], buf[length:]
                with self.lock:
                    self.seen.append((n, head, body))
                    answer, close = self.answers[len(self.seen) - 1]
                for i, piece in enumerate(answer if isinstance(answer, list) else [answer]):
                    if i:
                        time.sleep(0.1)
                    c.sendall(piece)
                if close or not answer:
                    return


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Callable[[list[tuple[Any, bool]]], tuple[KubeClient, Scripted]]]:
    servers: list[Scripted] = []

    def make(answers: list[tuple[Any, bool]]) -> tuple[KubeClient, Scripted]:
        srv = Scripted(answers)
        servers.append(srv)
        return client_for(tmp_path, f"http://127.0.0.1:{srv.port}"), srv

    yield make
    for s in servers:
        s.sock.close()


def client_for(tmp_path: Path, server: str) -> KubeClient:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": {"token": TOKEN}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / f"kubeconfig-{len(list(tmp_path.iterdir()))}"
    path.write_text(yaml.safe_dump(cfg))
    return KubeClient(str(path), qps=0)


def post(c: KubeClient, body: Any = None, **kw: Any) -> Any:
    return c.request("POST", "/api/v1/namespaces/ns/pods/p/binding", body=json.dumps(body or {"kind": "Binding"}).encode(), **kw)


def test_a_write_is_one_request_with_the_clients_headers_and_the_connection_is_kept(client: Any) -> None:
    c, srv = client([(ok(b'{"kind":"Status","status":"Success"}'), False), (ok(b'{"a":1}', "200 OK"), False)])
    assert post(c) == {"kind": "Status", "status": "Success"}
    assert c.request("PATCH", "/api/v1/namespaces/ns/pods/p/status", body=b'{"status":{}}', content_type="application/strategic-merge-patch+json") == {"a": 1}
    (n1, head1, body1), (n2, head2, body2) = srv.seen
    assert (n1, n2) == (1, 1)  # kept alive
    lines = head1.decode().split("\r\n")
    assert lines[0] == "POST /api/v1/namespaces/ns/pods/p/binding HTTP/1.1"
    assert sorted(lines[1:]) == sorted([f"Host: 127.0.0.1:{srv.port}", "Accept: application/json", "User-Agent: kubesched/0.1.0", "Content-Type: application/json", f"Authorization: Bearer {TOKEN}", f"Content-Length: {len(body1)}"])
    assert body1 == b'{"kind": "Binding"}'
    assert head2.decode().split("\r\n")[0] == "PATCH /api/v1/namespaces/ns/pods/p/status HTTP/1.1"
    assert "Content-Type: application/strategic-merge-patch+json" in head2.decode().split("\r\n")
    assert body2 == b'{"status":{}}'


def test_chunked_and_until_close_bodies_and_an_interim_answer(client: Any) -> None:
    chunked = b'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{"a"\r\n3;x=y\r\n:2}\r\n0\r\n\r\n'
    until_close = b'HTTP/1.0 201 Created\r\nContent-Type: application/json\r\n\r\n{"b":3}'
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b'{"c":4}')
    c, srv = client([(chunked, False), (until_close, True), (interim, False)])
    assert post(c) == {"a": 2}
    assert post(c) == {"b": 3}
    assert post(c) == {"c": 4}
    assert [n for n, _, _ in srv.seen] == [1, 1, 2]  # the body that ended with the connection: a new one


def test_connection_close_opens_a_new_connection(client: Any) -> None:
    c, srv = client([(ok(b"{}", extra="Connection: close\r\n"), True), (ok(b"{}"), False)])
    assert post(c) == {}
    assert post(c) == {}
    assert [n for n, _, _ in srv.seen] == [1, 2]


def test_errors_are_the_clients_and_a_dropped_connection_is_retryable(client: Any) -> None:
    conflict = json.dumps({"kind": "Status", "code": 409, "reason": "Conflict", "message": 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'}).encode()
    c, srv = client([(ok(conflict, "409 Conflict"), False), (ok(b"oops", "500 Internal Server Error"), False), (b"", True), (ok(b"<html>", "201 Created"), False), (ok(b'{"kind":"Status"', "201 Created"), False)])
    with pytest.raises(Conflict) as e:
        post(c)
    assert str(e.value) == 'POST /api/v1/namespaces/ns/pods/p/binding: 409: Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'
    with pytest.raises(ServerError) as e2:
        post(c)
    assert str(e2.value) == "POST /api/v1/namespaces/ns/pods/p/binding: 500: oops"
    with pytest.raises(OSError) as e3:
        post(c)  # the server closed the connection without an answer
    assert str(e3.value) == "the server closed the connection"
    assert retryable(e3.value)
    with pytest.raises(BadResponse) as e4:
        post(c)  # a new connection
    assert str(e4.value) == "POST /api/v1/namespaces/ns/pods/p/binding: 201: the body is not JSON"
    assert post(c, decode=False) == {}  # a body nobody reads is not decoded (this one is cut short)
    assert [n for n, _, _ in srv.seen] == [1, 1, 1, 2, 2]


def first_lines(srv: Scripted) -> list[str]:
    return [head.split(b"\r\n", 1)[0].decode() for _, head, _ in srv.seen]


NOT_FOUND = json.dumps({"kind": "Status", "code": 404, "reason": "NotFound", "message": "not found"}).encode()


def test_a_path_with_a_line_break_space_or_non_ascii_is_percent_encoded_as_urllib3_did(client: Any) -> None:
    c, srv = client([(ok(NOT_FOUND, "404 Not Found"), False)] * 3)
    evil = "x HTTP/1.1\r\nX-Pad: 1\r\n\r\nDELETE /api/v1/namespaces/kube-system/pods/victim"
    with pytest.raises(NotFound):
        c.request("PATCH", f"/api/v1/namespaces/ns/pods/{evil}", body={"metadata": {}}, content_type="application/merge-patch+json")
    with pytest.raises(NotFound):
        c.request("DELETE", "/api/v1/namespaces/ns/pods/\u00fc\t\x00\x7fz")
    with pytest.raises(NotFound):
        c.request("POST", "/api/v1/namespaces/n%41/pods", query={"dryRun": "All"}, body=b"{}")  # a safe target: sent as it is
    assert first_lines(srv) == [
        "PATCH /api/v1/namespaces/ns/pods/x%20HTTP/1.1%0D%0AX-Pad:%201%0D%0A%0D%0ADELETE%20/api/v1/namespaces/kube-system/pods/victim HTTP/1.1",
        "DELETE /api/v1/namespaces/ns/pods/%C3%BC%09%00%7Fz HTTP/1.1",
        "POST /api/v1/namespaces/n%41/pods?dryRun=All HTTP/1.1",
    ]
    assert [n for n, _, _ in srv.seen] == [1, 1, 1]  # one request each, on the kept connection


def test_the_host_header_is_http_clients_ascii_host_without_the_default_port(tmp_path: Path) -> None:
    long_label = "a" * 63
    cases = {
        "https://api.example.com": b"Host: api.example.com\r\n",
        "https://API.example.com.:443": b"Host: api.example.com\r\n",
        "http://api.example.com:80": b"Host: api.example.com\r\n",
        "https://api.example.com:80": b"Host: api.example.com:80\r\n",
        "http://api.example.com:443": b"Host: api.example.com:443\r\n",
        f"https://{long_label}.example.com:6443": f"Host: {long_label}.example.com:6443\r\n".encode(),
        "https://b\u00fccher.example": b"Host: xn--bcher-kva.example\r\n",
        "https://[fd00::1]:6443": b"Host: [fd00::1]:6443\r\n",
        "https://[fd00::1]": b"Host: [fd00::1]\r\n",
    }
    assert {server: client_for(tmp_path, server)._host_header for server in cases} == cases


def test_a_write_whose_answer_is_not_decoded_still_needs_a_2xx_with_a_json_object_or_no_body(client: Any) -> None:
    html = b"<html><body>Please log in</body></html>"
    login = "Location: https://sso.example.com/login\r\n"
    c, srv = client([
        (ok(html, "200 OK"), False),
        (ok(html, "302 Found", login), False),
        (ok(b'{"kind":"Status"}', "302 Found", login), False),
        (ok(b"", "200 OK"), False),
        (ok(b'{"kind":"Status","status":"Success"}'), False),
    ])
    w = Writer(c, reporting_controller="default-scheduler", instance="x", writers=1)
    try:
        pod = Pod({"metadata": {"name": "p", "namespace": "ns", "uid": "u1"}, "spec": {}})
        with pytest.raises(BadResponse) as e1:
            w.bind(pod, "n1")
        assert str(e1.value) == "POST /api/v1/namespaces/ns/pods/p/binding: 200: the body is not JSON"
        with pytest.raises(BadResponse) as e2:
            w.bind(pod, "n1")
        assert str(e2.value) == "POST /api/v1/namespaces/ns/pods/p/binding: 302: the body is not JSON"
        with pytest.raises(BadResponse) as e3:
            c.request("PATCH", "/api/v1/namespaces/ns/pods/p/status", body=b"{}", content_type="application/strategic-merge-patch+json", decode=False)
        assert str(e3.value) == "PATCH /api/v1/namespaces/ns/pods/p/status: 302: the body is not JSON"
        assert post(c, decode=False) == {}  # 200, no body
        w.bind(pod, "n1")  # 201 and the API server's Status
    finally:
        w.stop()
    assert len(srv.seen) == 5


def test_an_answer_sent_before_the_whole_body_was_read_is_the_result(tmp_path: Path) -> None:
    """Go's API server answers 413 after reading its limit of a body and closes the connection
    with the rest unread (a reset): the answer is read, not the send's error (urllib3 read it)."""
    too_large = json.dumps({"kind": "Status", "code": 413, "reason": "RequestEntityTooLarge", "message": "Request entity too large: limit is 3145728"}).encode()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    seen: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                c, _ = listener.accept()
            except OSError:
                return
            buf = b""
            while b"\r\n\r\n" not in buf:
                buf += c.recv(65536)
            seen.append(buf.split(b"\r\n", 1)[0])
            c.sendall(b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(too_large), too_large))
            c.close()  # the body's rest unread: a reset

    threading.Thread(target=serve, daemon=True).start()
    try:
        c = client_for(tmp_path, f"http://127.0.0.1:{listener.getsockname()[1]}")
        body = b'{"kind":"ConfigMap","data":{"a":"' + b"x" * (32 * 1024 * 1024) + b'"}}'
        for _ in range(2):
            with pytest.raises(ApiError) as e:
                c.request("POST", "/api/v1/namespaces/ns/configmaps", body=body)
            assert (e.value.status, str(e.value)) == (413, "POST /api/v1/namespaces/ns/configmaps: 413: Request entity too large: limit is 3145728")
            assert not retryable(e.value)
        assert seen == [b"POST /api/v1/namespaces/ns/configmaps HTTP/1.1"] * 2
    finally:
        listener.close()


def test_a_malformed_answer_is_a_retryable_connection_error_and_the_connection_is_dropped(client: Any) -> None:
    c, srv = client([
        (b"garbage\r\n\r\n", False),
        (b"HTTP/1.1 201 Created\r\nContent-Length: 12x\r\n\r\n{}", False),
        (b"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", False),
        (b"SPDY/3 201 Created\r\nContent-Length: 2\r\n\r\n{}", False),
        (ok(b"{}"), False),
    ])
    messages = []
    for _ in range(4):
        with pytest.raises(OSError) as e:
            post(c)
        assert retryable(e.value)
        messages.append(str(e.value))
    assert messages == [
        'malformed response: status line "garbage"',
        'malformed response: Content-Length "12x"',
        'malformed response: chunk size "zz"',
        'malformed response: status line "SPDY/3 201 Created"',
    ]
    assert post(c) == {}
    assert [n for n, _, _ in srv.seen] == [1, 2, 3, 4, 5]


def test_chunked_trailers_are_read_and_connection_close_in_a_token_list_closes(client: Any) -> None:
    trailer = [b'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n0\r\nX-', b"Trailer: 1\r\nX-More: 2\r\n\r\n"]
    close_te = ok(b'{"b":2}', extra="Connection: close, TE\r\n")
    c, srv = client([(trailer, False), (ok(b'{"c":3}'), False), (close_te, False), (ok(b'{"d":4}'), False)])
    assert post(c) == {"a": 1}
    assert post(c) == {"c": 3}  # the trailer's rest is not read as the start of this answer
    assert post(c) == {"b": 2}
    assert post(c) == {"d": 4}
    assert [n for n, _, _ in srv.seen] == [1, 1, 1, 2]


def test_a_write_does_not_take_a_connection_whose_stream_was_released_unfinished(client: Any) -> None:
    watch = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1d\r\n{"type":"ADDED","object":{}}\n\r\n'
    c, srv = client([(watch, False), (ok(b'{"e":5}'), False)])
    resp = c.request("GET", "/api/v1/pods", query={"watch": "true"}, timeout=None, stream=True)
    assert resp.read(8) == b'{"type":'
    resp.release_conn()  # back on the pool with the watch still open
    assert post(c) == {"e": 5}
    assert first_lines(srv) == ["GET /api/v1/pods?watch=true HTTP/1.1", "POST /api/v1/namespaces/ns/pods/p/binding HTTP/1.1"]
    assert [n for n, _, _ in srv.seen] == [1, 2]
