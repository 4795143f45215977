"""Kubernetes' CEL IP and CIDR libraries (apiserver@v0.36.3 pkg/cel/library ip.go, cidr.go) for DRA selectors.

Addresses are parsed as Go's ``net/netip`` ``ParseAddr``/``ParsePrefix`` parse them (a transcription, so
that what is accepted and the error texts are Go's: no IPv4 octet with a leading zero, no IPv4-mapped IPv6
address, no zone), and printed as ``Addr.String()`` prints them (RFC 5952). At run time an IP is the list
``["\\ue000ip", "<canonical address>"]`` and a CIDR ``["\\ue000cidr", "<canonical address>", <bits>]`` (see
:mod:`.cellibs`); the rows below are cellibs' overload rows for them.
"""

from __future__ import annotations

from functools import lru_cache

from .celtypes import NO_SUCH_OVERLOAD, CelFunctionError, go_quote

__all__ = [
    "CIDR_TAG",
    "IP_TAG",
    "NET_FUNCTIONS",
    "AddrError",
    "format_addr",
    "parse_addr",
    "parse_prefix",
]

IP_TAG = "\ue000ip"
CIDR_TAG = "\ue000cidr"
_INT_MAX = (1 << 63) - 1
_HEX = {c: int(c, 16) for c in "0123456789abcdefABCDEF"}
_V4_MAPPED = 0xFFFF << 32


class AddrError(ValueError):
    """An address or prefix net/netip rejects; ``str()`` is Go's text."""


#: an address: (bit length 32 or 128, value, zone)
Addr = tuple[int, int, str]


def _addr_error(text: str, msg: str, at: str = "") -> AddrError:
    if at:
        return AddrError(f"ParseAddr({go_quote(text)}): {msg} (at {go_quote(at)})")
    return AddrError(f"ParseAddr({go_quote(text)}): {msg}")


def _ipv4_fields(text: str, off: int, end: int) -> list[int]:
    fields: list[int] = []
    val = dig_len = 0
    s = text[off:end]
    for i, ch in enumerate(s):
        if "0" <= ch <= "9":
            if dig_len == 1 and val == 0:
                raise _addr_error(text, "IPv4 field has octet with leading zero")
            val = val * 10 + ord(ch) - 48
            dig_len += 1
            if val > 255:
                raise _addr_error(text, "IPv4 field has value >255")
        elif ch == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _addr_error(text, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _addr_error(text, "IPv4 address too long")
            fields.append(val)
            val = dig_len = 0
        else:
            raise _addr_error(text, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _addr_error(text, "IPv4 address too short")
    fields.append(val)
    return fields


def _parse_ipv6(text: str) -> Addr:
    s, zone = text, ""
    pct = s.find("%")
    if pct != -1:
        s, zone = s[:pct], s[pct + 1 :]
        if zone == "":
            raise _addr_error(text, "zone must be a non-empty string")
    ip = [0] * 16
    ellipsis = -1
    if s.startswith("::"):
        ellipsis = 0
        s = s[2:]
        if not s:
            return 128, 0, zone
    i = 0
    while i < 16:
        off = acc = 0
        while off < len(s):
            digit = _HEX.get(s[off])
            if digit is None:
                break
            acc = (acc << 4) + digit
            if off > 3:
                raise _addr_error(text, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _addr_error(text, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _addr_error(text, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _addr_error(
                    text, "embedded IPv4 address must replace the final 2 fields of the address", s
                )
            if i + 4 > 16:
                raise _addr_error(
                    text, "too many hex fields to fit an embedded IPv4 at the end of the address", s
                )
            end = len(text) - (len(zone) + 1 if zone else 0)
            ip[i : i + 4] = _ipv4_fields(text, end - len(s), end)
            s = ""
            i += 4
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _addr_error(text, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _addr_error(text, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _addr_error(text, "multiple :: in address", s)
            ellipsis = i
            s = s[1:]
            if not s:
                break
    if s:
        raise _addr_error(text, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _addr_error(text, "address string too short")
        n = 16 - i
        ip = ip[:ellipsis] + [0] * n + ip[ellipsis:i]
    elif ellipsis >= 0:
        raise _addr_error(text, "the :: must expand to at least one field of zeros")
    return 128, int.from_bytes(bytes(ip), "big"), zone


def parse_addr(text: str) -> Addr:
    """Go's ``netip.ParseAddr``: (bit length, value, zone); raises :class:`AddrError` with Go's text."""
    for ch in text:
        if ch == ".":
            fields = _ipv4_fields(text, 0, len(text))
            return 32, int.from_bytes(bytes(fields), "big"), ""
        if ch == ":":
            return _parse_ipv6(text)
        if ch == "%":
            raise _addr_error(text, "missing IPv6 address")
    raise _addr_error(text, "unable to parse IP")


def parse_prefix(text: str) -> tuple[Addr, int]:
    """Go's ``netip.ParsePrefix``: (address, bits); raises :class:`AddrError` with Go's text."""

    def fail(msg: str) -> AddrError:
        return AddrError(f"netip.ParsePrefix({go_quote(text)}): {msg}")

    slash = text.rfind("/")
    if slash < 0:
        raise fail("no '/'")
    try:
        addr = parse_addr(text[:slash])
    except AddrError as err:
        raise fail(str(err)) from None
    if addr[0] == 128 and addr[2]:
        raise fail("IPv6 zones cannot be present in a prefix")
    bits_text = text[slash + 1 :]
    if len(bits_text) > 1 and not "1" <= bits_text[0] <= "9":
        raise fail(f"bad bits after slash: {go_quote(bits_text)}")
    digits = bits_text[1:] if bits_text[:1] in ("+", "-") else bits_text
    if (
        not digits
        or not all("0" <= ch <= "9" for ch in digits)
        or not -_INT_MAX - 1 <= int(bits_text) <= _INT_MAX
    ):
        raise fail(f"bad bits after slash: {go_quote(bits_text)}")
    bits = int(bits_text)
    if bits < 0 or bits > addr[0]:
        raise fail("prefix length out of range")
    return addr, bits


def format_addr(bitlen: int, value: int) -> str:
    """Go's ``Addr.String()`` of an address without a zone."""
    if bitlen == 32:
        return ".".join(str(b) for b in value.to_bytes(4, "big"))
    groups = [(value >> (112 - 16 * k)) & 0xFFFF for k in range(8)]
    zero_start = zero_end = -1
    i = 0
    while i < 8:
        j = i
        while j < 8 and groups[j] == 0:
            j += 1
        if j - i >= 2 and j - i > zero_end - zero_start:
            zero_start, zero_end = i, j
        i = j + 1 if j > i else i + 1
    if zero_start < 0:
        return ":".join(f"{g:x}" for g in groups)
    head = ":".join(f"{g:x}" for g in groups[:zero_start])
    tail = ":".join(f"{g:x}" for g in groups[zero_end:])
    return f"{head}::{tail}"


def _is_4in6(addr: Addr) -> bool:
    return addr[0] == 128 and addr[1] >> 32 == 0xFFFF


def _parse_ip_addr(text: str) -> Addr:
    """The library's ``parseIPAddr``: netip's address without a zone or an IPv4-mapped IPv6 form."""
    try:
        addr = parse_addr(text)
    except AddrError as err:
        raise CelFunctionError(
            f"IP Address {go_quote(text)} parse error during conversion from string: {err}"
        ) from None
    if addr[2]:
        raise CelFunctionError(f"IP address {go_quote(text)} with zone value is not allowed")
    if _is_4in6(addr):
        raise CelFunctionError(f"IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr


_WRAP = "network address parse error during conversion from string: "


def _parse_cidr(text: str) -> tuple[Addr, int]:
    """The library's ``parseCIDR`` (its errors carry the prefix ``stringToCIDR`` adds a second time)."""
    try:
        addr, bits = parse_prefix(text)
    except AddrError as err:
        raise CelFunctionError(f"{_WRAP}{_WRAP}{err}") from None
    if _is_4in6(addr):
        raise CelFunctionError(f"{_WRAP}IPv4-mapped IPv6 address {go_quote(text)} is not allowed")
    return addr, bits


def _text(arg: object) -> str:
    if type(arg) is not str or arg.startswith("\ue000"):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return arg


def _is_tagged(arg: object, tag: str, size: int) -> bool:
    return type(arg) is list and len(arg) == size and arg[0] == tag


@lru_cache(maxsize=4096)
def _addr_of(text: str) -> tuple[int, int]:
    bitlen, value, _zone = parse_addr(text)
    return bitlen, value


def _ip(arg: object) -> tuple[int, int]:
    if not _is_tagged(arg, IP_TAG, 2):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    return _addr_of(arg[1])  # type: ignore[index]


def _cidr(arg: object) -> tuple[int, int, int]:
    if not _is_tagged(arg, CIDR_TAG, 3):
        raise CelFunctionError(NO_SUCH_OVERLOAD)
    bitlen, value = _addr_of(arg[1])  # type: ignore[index]
    return bitlen, value, arg[2]  # type: ignore[index]


def _ip_value(bitlen: int, value: int) -> list[object]:
    return [IP_TAG, format_addr(bitlen, value)]


def _cidr_value(bitlen: int, value: int, bits: int) -> list[object]:
    return [CIDR_TAG, format_addr(bitlen, value), bits]


# ---- ip (library.IP) ------------------------------------------------------------------------------------


def string_to_ip(arg: object) -> list[object]:
    bitlen, value, _zone = _parse_ip_addr(_text(arg))
    return _ip_value(bitlen, value)


def ip_family(arg: object) -> int:
    return 4 if _ip(arg)[0] == 32 else 6


def ip_is_canonical(arg: object) -> bool:
    text = _text(arg)
    bitlen, value, _zone = _parse_ip_addr(text)
    return format_addr(bitlen, value) == text


def is_ip(arg: object) -> bool:
    text = _text(arg)
    try:
        _parse_ip_addr(text)
    except CelFunctionError:
        return False
    return True


def ip_is_unspecified(arg: object) -> bool:
    return _ip(arg)[1] == 0


def ip_is_loopback(arg: object) -> bool:
    bitlen, value = _ip(arg)
    return value >> 24 == 127 if bitlen == 32 else value == 1


def _is_link_local_unicast(bitlen: int, value: int) -> bool:
    return value >> 16 == 0xA9FE if bitlen == 32 else (value >> 112) & 0xFFC0 == 0xFE80


def ip_is_link_local_unicast(arg: object) -> bool:
    return _is_link_local_unicast(*_ip(arg))


def ip_is_link_local_multicast(arg: object) -> bool:
    bitlen, value = _ip(arg)
    return value >> 8 == 0xE00000 if bitlen == 32 else (value >> 112) & 0xFF0F == 0xFF02


def ip_is_global_unicast(arg: object) -> bool:
    bitlen, value = _ip(arg)
    if bitlen == 32:
        if value in (0, 0xFFFFFFFF) or value >> 24 == 127 or value >> 28 == 0xE:
            return False
    elif value in (0, 1) or value >> 120 == 0xFF:
        return False
    return not _is_link_local_unicast(bitlen, value)


def net_to_string(arg: object) -> str:
    """``string()`` of an IP or a CIDR (the run environment has one overload for both list shapes)."""
    if _is_tagged(arg, IP_TAG, 2):
        return arg[1]  # type: ignore[index,no-any-return]
    if _is_tagged(arg, CIDR_TAG, 3):
        return f"{arg[1]}/{arg[2]}"  # type: ignore[index]
    raise CelFunctionError(NO_SUCH_OVERLOAD)


# ---- cidr (library.CIDR) --------------------------------------------------------------------------------


def string_to_cidr(arg: object) -> list[object]:
    (bitlen, value, _zone), bits = _parse_cidr(_text(arg))
    return _cidr_value(bitlen, value, bits)


def _mask(bitlen: int, bits: int) -> int:
    return ((1 << bits) - 1) << (bitlen - bits)


def _contains(prefix: tuple[int, int, int], addr: tuple[int, int]) -> bool:
    bitlen, value, bits = prefix
    if addr[0] != bitlen:
        return False
    return (value ^ addr[1]) & _mask(bitlen, bits) == 0


def cidr_contains_ip(arg: object, other: object) -> bool:
    prefix = _cidr(arg)
    if type(other) is str and not other.startswith("\ue000"):
        try:
            bitlen, value, _zone = _parse_ip_addr(other)
        except CelFunctionError:  # Go hands the error to cidrContainsIP, which answers for the CIDR
            raise CelFunctionError(NO_SUCH_OVERLOAD) from None
        return _contains(prefix, (bitlen, value))
    return _contains(prefix, _ip(other))


def cidr_contains_cidr(arg: object, other: object) -> bool:
    prefix = _cidr(arg)
    if type(other) is str and not other.startswith("\ue000"):
        (bitlen, value, _zone), bits = _parse_cidr(other)
        inner = (bitlen, value, bits)
    else:
        inner = _cidr(other)
    if prefix[0] != inner[0] or prefix[2] > inner[2]:
        return False
    # Overlaps (on the shorter prefix, which is the outer one here)
    return (prefix[1] ^ inner[1]) & _mask(prefix[0], prefix[2]) == 0


def cidr_ip(arg: object) -> list[object]:
    bitlen, value, _bits = _cidr(arg)
    return _ip_value(bitlen, value)


def cidr_prefix_length(arg: object) -> int:
    return _cidr(arg)[2]


def cidr_masked(arg: object) -> list[object]:
    bitlen, value, bits = _cidr(arg)
    return _cidr_value(bitlen, value & _mask(bitlen, bits), bits)


def is_cidr(arg: object) -> bool:
    text = _text(arg)
    try:
        _parse_cidr(text)
    except CelFunctionError:
        return False
    return True


NET_FUNCTIONS = [
    ("ip", "string_to_ip", False, ("string",), "IP", string_to_ip),
    ("family", "ip_family", True, ("IP",), "int", ip_family),
    ("ip.isCanonical", "ip_is_canonical", False, ("string",), "bool", ip_is_canonical),
    ("isUnspecified", "ip_is_unspecified", True, ("IP",), "bool", ip_is_unspecified),
    ("isLoopback", "ip_is_loopback", True, ("IP",), "bool", ip_is_loopback),
    (
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        True,
        ("IP",),
        "bool",
        ip_is_link_local_multicast,
    ),
    (
        "isLinkLocalUnicast",
        "ip_is_link_local_unicast",
        True,
        ("IP",),
        "bool",
        ip_is_link_local_unicast,
    ),
    ("isGlobalUnicast", "ip_is_global_unicast", True, ("IP",), "bool", ip_is_global_unicast),
    ("isIP", "is_ip", False, ("string",), "bool", is_ip),
    ("cidr", "string_to_cidr", False, ("string",), "CIDR", string_to_cidr),
    ("containsIP", "cidr_contains_ip_string", True, ("CIDR", "string"), "bool", cidr_contains_ip),
    ("containsIP", "cidr_contains_ip_ip", True, ("CIDR", "IP"), "bool", cidr_contains_ip),
    (
        "containsCIDR",
        "cidr_contains_cidr_string",
        True,
        ("CIDR", "string"),
        "bool",
        cidr_contains_cidr,
    ),
    ("containsCIDR", "cidr_contains_cidr", True, ("CIDR", "CIDR"), "bool", cidr_contains_cidr),
    ("ip", "cidr_ip", True, ("CIDR",), "IP", cidr_ip),
    ("prefixLength", "cidr_prefix_length", True, ("CIDR",), "int", cidr_prefix_length),
    ("masked", "cidr_masked", True, ("CIDR",), "CIDR", cidr_masked),
    ("isCIDR", "is_cidr", False, ("string",), "bool", is_cidr),
]
