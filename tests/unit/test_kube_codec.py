"""The live path's JSON (``cluster/kubernetes/codec.py``) gives what the standard library gives,
and an informer's watch turns a byte stream cut anywhere into the same events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.runtime.cluster.kubernetes.codec import copy_json, dumps, loads
from kubesched.runtime.cluster.kubernetes.informers import Informer
from kubesched.sdk.readonly import read_only

POD_EVENT = (
    '{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"pod-1","namespace":"bench",'
    '"uid":"4c1e8a4e-5f7b-4a37-9a38-0b1b2c3d4e5f","resourceVersion":"1207","creationTimestamp":"2026-11-24T05:47:12Z",'
    '"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2026-11-24T05:47:12Z",'
    '"fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:containers":{}}}}]},"spec":{"containers":[{"name":"pause",'
    '"image":"registry.k8s.io/pause:3.10","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":'
    '{"cpu":"100m","memory":"128Mi"},"requests":{"cpu":"100m","memory":"128Mi"}}}],"restartPolicy":"Always",'
    '"terminationGracePeriodSeconds":30,"schedulerName":"default-scheduler","priority":0,"enableServiceLinks":true},'
    '"status":{"phase":"Pending","qosClass":"Guaranteed"}}}'
)


@pytest.mark.parametrize(
    "text",
    [
        POD_EVENT,
        '{"a": 18446744073709551616, "b": -9223372036854775809, "c": 123456789012345678901234567890}',
        '{"a": 1e400, "b": -1e400}',
        '{"a": "\\ud800", "b": "\\u00e9\\ud83d\\ude00", "c": "caf\u00e9"}',
        '{"a": NaN, "b": Infinity}',
        "\ufeff{}",
        '{"a": 1, "a": 2}',
        '{"a": 5e-324, "b": 2.2250738585072011e-308, "c": 1.7976931348623157e308, "d": 0.1e1, "e": -0}',
        " [] ",
    ],
)
def test_loads_gives_what_json_loads_gives(text: str) -> None:
    want = json.loads(text.encode())
    got = loads(text.encode())
    assert repr(got) == repr(want)  # the same values and types (an int stays an int)


@pytest.mark.parametrize("text", ["[1,]", '{"a":1} x', "", '{"a": tru}'])
def test_invalid_json_raises_json_loads_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as want:
        json.loads(text.encode())
    with pytest.raises(json.JSONDecodeError) as got:
        loads(text.encode())
    assert str(got.value) == str(want.value)


def test_dumps_encodes_a_binding_the_api_server_reads_back_equal() -> None:
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "target": {"apiVersion": "v1", "kind": "Node", "name": "n\u00e9"}}
    out = dumps(body)
    assert type(out) is bytes
    assert out == b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p","namespace":"ns","uid":"u"},"target":{"apiVersion":"v1","kind":"Node","name":"n\xc3\xa9"}}'
    assert json.loads(out) == body


def test_copy_json_of_a_cached_object_is_a_mutable_deep_copy() -> None:
    cached = read_only(json.loads(POD_EVENT)["object"])
    copy = copy_json(cached)
    assert copy == cached
    assert type(copy) is dict and type(copy["spec"]["containers"]) is list and type(copy["spec"]["containers"][0]) is dict
    copy["spec"]["containers"][0]["name"] = "changed"
    assert cached["spec"]["containers"][0]["name"] == "pause"


class _Stream:
    """A watch response whose body arrives in the given chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.released = False

    def stream(self, amt: int, decode_content: bool = True) -> Any:
        return iter(self.chunks)

    def release_conn(self) -> None:
        self.released = True


class _Client:
    def __init__(self, resp: _Stream) -> None:
        self.resp = resp

    def request(self, method: str, path: str, **options: Any) -> Any:
        assert options["stream"] is True
        return self.resp


def _watch(chunks: list[bytes]) -> list[tuple[str, str | None, str | None]]:
    resp = _Stream(chunks)
    inf = Informer(_Client(resp), "Pod", "v1", "pods")  # type: ignore[arg-type]
    seen: list[tuple[str, str | None, str | None]] = []
    inf.attach(lambda etype, kind, old, new: seen.append((etype, old and old["metadata"]["resourceVersion"], new and new["metadata"]["resourceVersion"])))
    assert inf._watch() is True
    assert resp.released
    assert inf.resource_version == "9"
    return seen


def _event(etype: str, name: str, rv: str) -> bytes:
    return json.dumps({"type": etype, "object": {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv, "managedFields": [{"manager": "m"}]}}}).encode()


def test_a_watch_stream_cut_anywhere_gives_the_same_events() -> None:
    body = b"\n".join([_event("ADDED", "a", "5"), b"", b"  ", _event("ADDED", "b", "6"), _event("MODIFIED", "a", "7"), _event("DELETED", "b", "8"), b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"9"}}}']) + b"\n"
    want = [("ADDED", None, "5"), ("ADDED", None, "6"), ("MODIFIED", "5", "7"), ("DELETED", "6", None)]
    assert _watch([body]) == want
    for size in (1, 2, 7, 64, 150, len(body) - 1):
        assert _watch([body[i : i + size] for i in range(0, len(body), size)]) == want, size


def test_a_watched_object_is_cached_read_only_without_managed_fields() -> None:
    resp = _Stream([POD_EVENT.encode() + b"\n"])
    inf = Informer(_Client(resp), "Pod", "v1", "pods")  # type: ignore[arg-type]
    assert inf._watch() is True
    obj = inf.store["bench/pod-1"]
    assert "managedFields" not in obj["metadata"]
    with pytest.raises(TypeError, match="read-only"):
        obj["metadata"]["name"] = "x"
    assert inf.resource_version == "1207"
