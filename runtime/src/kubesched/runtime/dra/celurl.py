"""Kubernetes' CEL URL library (apiserver@v0.36.3 pkg/cel/library urls.go) for DRA selectors.

A URL is parsed as Go's ``net/url`` parses it (a transcription of ``ParseRequestURI`` and ``Parse`` on the
UTF-8 bytes, so that what is accepted, the fields and the error texts are Go's, with the go1.26 defaults:
``urlstrictcolons`` on, at most 10000 query parameters). At run time a URL is the tagged string
``"\\ue000u:<URL.String()>"`` (so CEL's ``==`` is Go's ``URL.Equal``); the getters parse that string again (memoised).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from .celnet import AddrError, parse_addr
from .celtypes import NO_SUCH_OVERLOAD, CelFunctionError, go_quote

__all__ = ["URL_FUNCTIONS", "URL_TAG", "GoURL", "URLError", "parse_url"]

URL_TAG = "\ue000u:"


class URLError(ValueError):
    """A URL net/url rejects; ``str()`` is Go's text."""


# net/url's encoding table (encoding_table.go): the bytes each mode leaves unescaped
_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_PATH = frozenset(_ALNUM + b"$&+,-./:;=@_~")
_PATH_SEGMENT = frozenset(_ALNUM + b"$&+-.:=@_~")
_HOST = frozenset(_ALNUM + b"!\"$&'()*+,-.:;<=>[]_~")
_USER_PASSWORD = frozenset(_ALNUM + b"$&+,-.;=_~")
_QUERY_COMPONENT = frozenset(_ALNUM + b"-._~")
_FRAGMENT = frozenset(_ALNUM + b"!$&()*+,-./:;=?@_~")
_ZONE = _HOST
_HEX = frozenset(b"0123456789ABCDEFabcdef")
_USERINFO = frozenset(_ALNUM + b"-._:~!$&'()*+,;=%@")
_MAX_PARAMS = 10000


def _quote(b: bytes) -> str:
    """strconv.Quote of a Go string holding ``b`` (invalid UTF-8 bytes as ``\\xNN``)."""
    text = go_quote(b.decode("utf-8", "surrogateescape"))
    return "".join(
        f"\\x{ord(ch) - 0xDC00:02x}" if 0xDC80 <= ord(ch) <= 0xDCFF else ch for ch in text
    )


class _EscapeError(URLError):
    def __init__(self, s: bytes) -> None:
        super().__init__(f"invalid URL escape {_quote(s)}")


def _unhex(c: int) -> int:
    return 9 * (c >> 6) + (c & 15)


def _unescape(s: bytes, mode: frozenset[int]) -> bytes:
    n = 0
    has_plus = False
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:  # %
            n += 1
            if i + 2 >= len(s) or s[i + 1] not in _HEX or s[i + 2] not in _HEX:
                raise _EscapeError(s[i : i + 3])
            if mode is _HOST and _unhex(s[i + 1]) < 8 and s[i : i + 3] != b"%25":
                raise _EscapeError(s[i : i + 3])
            if mode is _ZONE_MODE:
                v = _unhex(s[i + 1]) << 4 | _unhex(s[i + 2])
                if s[i : i + 3] != b"%25" and v != 0x20 and v not in _ZONE:
                    raise _EscapeError(s[i : i + 3])
            i += 3
        elif c == 0x2B:  # +
            has_plus = mode is _QUERY_COMPONENT
            i += 1
        else:
            if (mode is _HOST or mode is _ZONE_MODE) and c < 0x80 and c not in mode:
                raise URLError(f"invalid character {_quote(s[i : i + 1])} in host name")
            i += 1
    if n == 0 and not has_plus:
        return s
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == 0x25:
            out.append(_unhex(s[i + 1]) << 4 | _unhex(s[i + 2]))
            i += 3
            continue
        out.append(0x20 if c == 0x2B and mode is _QUERY_COMPONENT else c)
        i += 1
    return bytes(out)


#: the zone mode is the host table under another identity (unescape tells them apart)
_ZONE_MODE = frozenset(_ZONE)


def _escape(s: bytes, mode: frozenset[int]) -> bytes:
    if all(c in mode for c in s):
        return s
    out = bytearray()
    for c in s:
        if c == 0x20 and mode is _QUERY_COMPONENT:
            out.append(0x2B)
        elif c not in mode:
            out += b"%%%02X" % c
        else:
            out.append(c)
    return bytes(out)


def _valid_optional_port(port: bytes) -> bool:
    if not port:
        return True
    return port[:1] == b":" and all(0x30 <= c <= 0x39 for c in port[1:])


class GoURL(NamedTuple):
    """The fields of Go's ``url.URL`` the library reads (bytes, as Go's strings)."""

    scheme: bytes
    opaque: bytes
    user: tuple[bytes, bytes | None] | None
    host: bytes
    path: bytes
    raw_path: bytes
    raw_query: bytes
    force_query: bool
    omit_host: bool
    fragment: bytes
    raw_fragment: bytes


def _scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        if 0x61 <= c <= 0x7A or 0x41 <= c <= 0x5A:
            continue
        if 0x30 <= c <= 0x39 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == 0x3A:
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    open_bracket = host.rfind(b"[")
    if open_bracket > 0:
        raise URLError("invalid IP-literal")
    if open_bracket == 0:
        close_bracket = host.rfind(b"]")
        if close_bracket < 0:
            raise URLError("missing ']' in host")
        colon_port = host[close_bracket + 1 :]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {_quote(colon_port)} after host")
        colon_port = _unescape(colon_port, _HOST)
        hostname = host[1:close_bracket]
        zone = hostname.find(b"%25")
        if zone >= 0:
            unescaped = _unescape(hostname[:zone], _HOST) + _unescape(hostname[zone:], _ZONE_MODE)
        else:
            unescaped = _unescape(hostname, _HOST)
        try:
            addr = parse_addr(unescaped.decode("utf-8", "surrogateescape"))
        except AddrError as err:
            raise URLError(f"invalid host: {err}") from None
        if addr[0] == 32:
            raise URLError("invalid IP-literal")
        return b"[" + unescaped + b"]" + colon_port
    i = host.find(b":")
    if i != -1:
        last = host.rfind(b":")
        if last != i and scheme not in (b"http", b"https"):
            i = last
        colon_port = host[i:]
        if not _valid_optional_port(colon_port):
            raise URLError(f"invalid port {_quote(colon_port)} after host")
    return _unescape(host, _HOST)


def _parse_authority(
    scheme: bytes, authority: bytes
) -> tuple[tuple[bytes, bytes | None] | None, bytes]:
    i = authority.rfind(b"@")
    host = _parse_host(scheme, authority[i + 1 :] if i >= 0 else authority)
    if i < 0:
        return None, host
    userinfo = authority[:i]
    if not all(c in _USERINFO for c in userinfo):
        raise URLError("net/url: invalid userinfo")
    if b":" not in userinfo:
        return (_unescape(userinfo, _USER_PASSWORD), None), host
    username, _, password = userinfo.partition(b":")
    return (_unescape(username, _USER_PASSWORD), _unescape(password, _USER_PASSWORD)), host


def _parse(raw: bytes, via_request: bool) -> GoURL:
    if any(c < 0x20 or c == 0x7F for c in raw):
        raise URLError("net/url: invalid control character in URL")
    if raw == b"" and via_request:
        raise URLError("empty url")
    if raw == b"*":
        return GoURL(b"", b"", None, b"", b"*", b"", b"", False, False, b"", b"")
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    force_query = False
    raw_query = b""
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        force_query, rest = True, rest[:-1]
    else:
        rest, _, raw_query = rest.partition(b"?")
    if not rest.startswith(b"/"):
        if scheme:
            return GoURL(scheme, rest, None, b"", b"", b"", raw_query, force_query, False, b"", b"")
        if via_request:
            raise URLError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    user: tuple[bytes, bytes | None] | None = None
    host = b""
    omit_host = False
    if (scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, rest = rest[2:], b""
        slash = authority.find(b"/")
        if slash >= 0:
            authority, rest = authority[:slash], authority[slash:]
        user, host = _parse_authority(scheme, authority)
    elif scheme and rest.startswith(b"/"):
        omit_host = True
    path = _unescape(rest, _PATH)
    raw_path = b"" if _escape(path, _PATH) == rest else rest
    return GoURL(
        scheme, b"", user, host, path, raw_path, raw_query, force_query, omit_host, b"", b""
    )


def _fail(text: bytes, err: URLError) -> CelFunctionError:
    return CelFunctionError(
        f"URL parse error during conversion from string: parse {_quote(text)}: {err}"
    )


def parse_url(text: str) -> GoURL:
    """The library's ``url()``: ``url.ParseRequestURI`` must accept ``text``, and ``url.Parse`` gives the URL."""
    raw = text.encode("utf-8", "surrogateescape")
    try:
        _parse(raw, True)
    except URLError as err:
        raise _fail(raw, err) from None
    head, sep, frag = raw.partition(b"#")
    try:
        url = _parse(head, False)
    except URLError as err:
        raise _fail(head, err) from None
    if not sep or not frag:
        return url
    try:
        fragment = _unescape(frag, _FRAGMENT)
    except URLError as err:
        raise _fail(raw, err) from None
    raw_fragment = b"" if _escape(fragment, _FRAGMENT) == frag else frag
    return url._replace(fragment=fragment, raw_fragment=raw_fragment)


def _valid_encoded(s: bytes, mode: frozenset[int]) -> bool:
    return all(c in b"!$&'()*+,;=:@[]%" or c in mode for c in s)


def _escaped_path(u: GoURL) -> bytes:
    if u.raw_path and _valid_encoded(u.raw_path, _PATH):
        try:
            if _unescape(u.raw_path, _PATH) == u.path:
                return u.raw_path
        except URLError:
            pass
    if u.path == b"*":
        return b"*"
    return _escape(u.path, _PATH)


def _escaped_fragment(u: GoURL) -> bytes:
    if u.raw_fragment and _valid_encoded(u.raw_fragment, _FRAGMENT):
        try:
            if _unescape(u.raw_fragment, _FRAGMENT) == u.fragment:
                return u.raw_fragment
        except URLError:
            pass
    return _escape(u.fragment, _FRAGMENT)


def _string(u: GoURL) -> bytes:
    """Go's ``URL.String()``."""
    out = bytearray()
    if u.scheme:
        out += u.scheme + b":"
    if u.opaque:
        out += u.opaque
    else:
        if (u.scheme or u.host or u.user is not None) and not (
            u.omit_host and not u.host and u.user is None
        ):
            if u.host or u.path or u.user is not None:
                out += b"//"
            if u.user is not None:
                out += _escape(u.user[0], _USER_PASSWORD)
                if u.user[1] is not None:
                    out += b":" + _escape(u.user[1], _USER_PASSWORD)
                out += b"@"
            if u.host:
                out += _escape(u.host, _HOST)
        path = _escaped_path(u)
        if path and path[:1] != b"/" and u.host:
            out += b"/"
        if not out and b":" in path.partition(b"/")[0]:
            out += b"./"
        out += path
    if u.force_query or u.raw_query:
        out += b"?" + u.raw_query
    if u.fragment:
        out += b"#" + _escaped_fragment(u)
    return bytes(out)


def _split_host_port(host_port: bytes) -> tuple[bytes, bytes]:
    host, port = host_port, b""
    colon = host.rfind(b":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith(b"[") and host.endswith(b"]"):
        host = host[1:-1]
    return host, port


def _query(raw_query: bytes) -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    if raw_query.count(b"&") + 1 > _MAX_PARAMS:
        return values
    for part in raw_query.split(b"&") if raw_query else ():
        if b";" in part or not part:
            continue
        key, _, value = part.partition(b"=")
        try:
            k, v = _unescape(key, _QUERY_COMPONENT), _unescape(value, _QUERY_COMPONENT)
        except URLError:
            continue
        values.setdefault(_text_of(k), []).append(_text_of(v))
    return values


def _text_of(b: bytes) -> str:
    return b.decode("utf-8", "replace")


# ---- the library's functions --------------------------------------------------------------------------


def _arg_text(arg: object) -> str:
    if type(arg) is not str or arg.startswith("\ue000"):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return arg


@lru_cache(maxsize=4096)
def _url_of(tag: str) -> GoURL:
    return parse_url(tag[len(URL_TAG) :])


def _url(arg: object) -> GoURL:
    if type(arg) is not str or not arg.startswith(URL_TAG):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return _url_of(arg)


def string_to_url(arg: object) -> str:
    return URL_TAG + _text_of(_string(parse_url(_arg_text(arg))))


def url_get_scheme(arg: object) -> str:
    return _text_of(_url(arg).scheme)


def url_get_host(arg: object) -> str:
    return _text_of(_url(arg).host)


def url_get_hostname(arg: object) -> str:
    return _text_of(_split_host_port(_url(arg).host)[0])


def url_get_port(arg: object) -> str:
    return _text_of(_split_host_port(_url(arg).host)[1])


def url_get_escaped_path(arg: object) -> str:
    return _text_of(_escaped_path(_url(arg)))


def url_get_query(arg: object) -> dict[str, list[str]]:
    return _query(_url(arg).raw_query)


def is_url(arg: object) -> bool:
    try:
        _parse(_arg_text(arg).encode("utf-8", "surrogateescape"), True)
    except URLError:
        return False
    return True


URL_FUNCTIONS = [
    ("url", "string_to_url", False, ("string",), "URL", string_to_url),
    ("getScheme", "url_get_scheme", True, ("URL",), "string", url_get_scheme),
    ("getHost", "url_get_host", True, ("URL",), "string", url_get_host),
    ("getHostname", "url_get_hostname", True, ("URL",), "string", url_get_hostname),
    ("getPort", "url_get_port", True, ("URL",), "string", url_get_port),
    ("getEscapedPath", "url_get_escaped_path", True, ("URL",), "string", url_get_escaped_path),
    ("getQuery", "url_get_query", True, ("URL",), "QUERY", url_get_query),
    ("isURL", "is_url_string", False, ("string",), "bool", is_url),
]
