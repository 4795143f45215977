"""KubeClient's direct write path (api.py): writes go over the pool's own connections without
http.client. A scripted server on a real socket answers each request with the bytes a test
gives (keep-alive, Content-Length, chunked, a body ending with the connection, a close, a 1xx),
and records what it received on which connection."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.runtime.cluster.kubernetes import Conflict, KubeClient, ServerError
from kubesched.runtime.cluster.kubernetes.errors import BadResponse, retryable

TOKEN = "t0ken"


def ok(body: bytes, status: str = "201 Created", extra: str = "") -> bytes:
    return f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


class Scripted:
    """Answers the n-th request with ``answers[n]`` (bytes; b"" closes the connection without
    answering); after an answer whose script says ``close``, closes the connection."""

    def __init__(self, answers: list[tuple[bytes, bool]]) -> None:
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
                if answer:
                    c.sendall(answer)
                if close or not answer:
                    return


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Callable[[list[tuple[bytes, bool]]], tuple[KubeClient, Scripted]]]:
    servers: list[Scripted] = []

    def make(answers: list[tuple[bytes, bool]]) -> tuple[KubeClient, Scripted]:
        srv = Scripted(answers)
        servers.append(srv)
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{srv.port}"}}],
            "users": [{"name": "u", "user": {"token": TOKEN}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
        path = tmp_path / f"kubeconfig-{len(servers)}"
        path.write_text(yaml.safe_dump(cfg))
        return KubeClient(str(path), qps=0), srv

    yield make
    for s in servers:
        s.sock.close()


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
    c, srv = client([(ok(conflict, "409 Conflict"), False), (ok(b"oops", "500 Internal Server Error"), False), (b"", True), (ok(b"<html>", "201 Created"), False), (ok(b"x", "201 Created"), False)])
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
    assert post(c, decode=False) == {}  # a body nobody reads is not decoded
    assert [n for n, _, _ in srv.seen] == [1, 1, 1, 2, 2]
