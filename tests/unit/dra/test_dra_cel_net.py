"""Kubernetes' IP, CIDR and URL CEL libraries in DRA selectors (kubesched.runtime.dra.celnet, celurl).

Ids name the Go test and case: ``GoTestIP/<name>`` and ``GoTestCIDR/<name>`` are apiserver@v0.36.3
pkg/cel/library ip_test.go and cidr_test.go; ``netip/<case>`` are Go's net/netip ParseAddr/ParsePrefix
rules, ``GoTestValidationExpressions/URL_parsing`` is apiextensions-apiserver@v0.36.3
pkg/apiserver/schema/cel/validation_test.go, ``neturl/<case>`` Go's net/url rules (the texts as Go's
CompileCELExpression/DeviceMatches give them, checked with a Go harness).
"""

from __future__ import annotations

import cel_support
import pytest
from cel_support import matches

from kubesched.runtime.dra.cel import compile_expression
from kubesched.runtime.dra.celnet import format_addr, parse_addr

DEVICE = {
    "name": "nic-0",
    "attributes": {"ip": {"string": "10.0.0.7"}, "model": {"string": "a100"}},
}


def evaluate(expression: str) -> bool:
    return matches(expression, DEVICE)


def runtime_error(expression: str) -> str:
    return cel_support.runtime_error(expression, DEVICE)


TRUE = [
    pytest.param('ip("192.168.0.1") == ip("192.168.0.1")', id="GoTestIP/ipv4"),
    pytest.param('ip("192.168.0.1").family() == 4', id="GoTestIP/family_ipv4"),
    pytest.param('ip("2001:db8::68").family() == 6', id="GoTestIP/family_ipv6"),
    pytest.param(
        'ip("2001:db8::68") == ip("2001:0db8:0000:0000:0000:0000:0000:0068")',
        id="GoTestIP/ipv6_equal",
    ),
    pytest.param('ip.isCanonical("127.0.0.1")', id="GoTestIP/ipv4_is_canonical"),
    pytest.param('!ip.isCanonical("2001:DB8::68")', id="GoTestIP/ipv6_uppercase_is_not_canonical"),
    pytest.param('ip.isCanonical("2001:db8::68")', id="GoTestIP/ipv6_is_canonical"),
    pytest.param(
        '!ip.isCanonical("2001:db8:0:0:0:0:0:68")', id="GoTestIP/ipv6_expanded_is_not_canonical"
    ),
    pytest.param('isIP("192.168.0.1") && isIP("2001:db8::68")', id="GoTestIP/is_ip"),
    pytest.param(
        '!isIP("192.168.0.1.0") && !isIP("::ffff:1.2.3.4") && !isIP("fe80::1%eth0")',
        id="GoTestIP/is_ip_false",
    ),
    pytest.param(
        'ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()', id="GoTestIP/is_unspecified"
    ),
    pytest.param(
        '!ip("127.0.0.1").isUnspecified() && !ip("::1").isUnspecified()',
        id="GoTestIP/is_unspecified_false",
    ),
    pytest.param(
        'ip("127.0.0.1").isLoopback() && ip("::1").isLoopback()', id="GoTestIP/is_loopback"
    ),
    pytest.param(
        '!ip("1.2.3.4").isLoopback() && !ip("2001:db8::abcd").isLoopback()',
        id="GoTestIP/is_loopback_false",
    ),
    pytest.param(
        'ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()',
        id="GoTestIP/is_link_local_multicast",
    ),
    pytest.param(
        '!ip("224.0.1.1").isLinkLocalMulticast() && !ip("fd00::1").isLinkLocalMulticast()',
        id="GoTestIP/is_link_local_multicast_false",
    ),
    pytest.param(
        'ip("169.254.169.254").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()',
        id="GoTestIP/is_link_local_unicast",
    ),
    pytest.param(
        '!ip("192.168.0.1").isLinkLocalUnicast() && !ip("fec0::1").isLinkLocalUnicast()',
        id="GoTestIP/is_link_local_unicast_false",
    ),
    pytest.param(
        'ip("192.168.0.1").isGlobalUnicast() && ip("2001:db8::abcd").isGlobalUnicast()',
        id="GoTestIP/is_global_unicast",
    ),
    pytest.param(
        '!ip("255.255.255.255").isGlobalUnicast() && !ip("224.0.0.1").isGlobalUnicast() && !ip("ff00::1").isGlobalUnicast()',
        id="GoTestIP/is_global_unicast_false",
    ),
    pytest.param('ip("::1.2.3.4") == ip("::102:304")', id="netip/embedded_ipv4_after_ellipsis"),
    pytest.param('ip(device.attributes["dra.example.com"].ip).family() == 4', id="attribute_ip"),
    pytest.param('!isIP(device.attributes["dra.example.com"].model)', id="attribute_not_ip"),
    pytest.param('cidr("192.168.0.0/24") == cidr("192.168.0.0/24")', id="GoTestCIDR/parse_ipv4"),
    pytest.param(
        'cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', id="GoTestCIDR/contains_ipv4_ip"
    ),
    pytest.param(
        '!cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))',
        id="GoTestCIDR/does_not_contain_ipv4_ip",
    ),
    pytest.param(
        'cidr("192.168.0.0/24").containsIP("192.168.0.1")', id="GoTestCIDR/contains_ipv4_string"
    ),
    pytest.param(
        '!cidr("192.168.0.0/24").containsIP("192.168.1.1")',
        id="GoTestCIDR/does_not_contain_ipv4_string",
    ),
    pytest.param(
        'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))',
        id="GoTestCIDR/contains_ipv4_subnet",
    ),
    pytest.param(
        'cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.1/32"))',
        id="GoTestCIDR/contains_ipv4_host",
    ),
    pytest.param(
        '!cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))',
        id="GoTestCIDR/does_not_contain_larger",
    ),
    pytest.param(
        '!cidr("192.168.0.0/24").containsCIDR(cidr("192.169.0.1/32"))',
        id="GoTestCIDR/does_not_contain_other",
    ),
    pytest.param(
        'cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")',
        id="GoTestCIDR/contains_ipv4_subnet_string",
    ),
    pytest.param(
        '!cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")',
        id="GoTestCIDR/does_not_contain_larger_string",
    ),
    pytest.param('cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', id="GoTestCIDR/ipv4_ip"),
    pytest.param(
        'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', id="GoTestCIDR/ipv4_masked"
    ),
    pytest.param('cidr("192.168.0.0/24").prefixLength() == 24', id="GoTestCIDR/ipv4_prefix_length"),
    pytest.param(
        'cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', id="GoTestCIDR/contains_ipv6_ip"
    ),
    pytest.param(
        '!cidr("2001:db8::/32").containsIP("2001:dc8::1")',
        id="GoTestCIDR/does_not_contain_ipv6_string",
    ),
    pytest.param(
        'cidr("2001:db8::/32").containsCIDR("2001:db8::/33")',
        id="GoTestCIDR/contains_ipv6_subnet_string",
    ),
    pytest.param(
        '!cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))',
        id="GoTestCIDR/does_not_contain_ipv6_larger",
    ),
    pytest.param(
        'cidr("2001:db8:1::/32").masked() == cidr("2001:db8::/32")', id="GoTestCIDR/ipv6_masked"
    ),
    pytest.param('cidr("2001:db8::/32").ip() == ip("2001:db8::")', id="GoTestCIDR/ipv6_ip"),
    pytest.param('cidr("2001:db8::/32").prefixLength() == 32', id="GoTestCIDR/ipv6_prefix_length"),
    pytest.param(
        'cidr("192.168.0.1/24") != cidr("192.168.0.0/24")', id="netip/prefix_keeps_host_bits"
    ),
    pytest.param(
        '!cidr("0.0.0.0/0").containsIP(ip("::1")) && !cidr("0.0.0.0/0").containsCIDR(cidr("::/0"))',
        id="netip/families",
    ),
    pytest.param(
        'isCIDR("1.2.3.4/8") && !isCIDR("1.2.3.4") && !isCIDR("::ffff:1.2.3.4/120")',
        id="GoTestCIDR/is_cidr",
    ),
    pytest.param(
        'cidr("10.0.0.0/8").containsIP(device.attributes["dra.example.com"].ip)',
        id="attribute_in_cidr",
    ),
]


@pytest.mark.parametrize("expression", TRUE)
def test_true(expression: str) -> None:
    assert evaluate(expression) is True


_IP = 'IP Address "{0}" parse error during conversion from string: ParseAddr("{0}"): '
_CIDR = "network address parse error during conversion from string: "
_PREFIX = _CIDR + _CIDR + 'netip.ParsePrefix("{0}"): '

ERRORS = [
    ("GoTestIP/parse_invalid_ipv4", "192.168.0.1.0", _IP + "IPv4 address too long"),
    (
        "GoTestIP/parse_ipv4_leading_zero",
        "192.168.0.01",
        _IP + "IPv4 field has octet with leading zero",
    ),
    ("netip/too_short", "1.2.3", _IP + "IPv4 address too short"),
    ("netip/empty_field", "1.2..4", _IP + 'IPv4 field must have at least one digit (at ".4")'),
    ("netip/octet_too_big", "1.2.3.256", _IP + "IPv4 field has value >255"),
    ("netip/bad_character", "1.2.3.a", _IP + 'unexpected character (at "a")'),
    ("netip/empty", "", _IP + "unable to parse IP"),
    (
        "netip/trailing_garbage",
        "1:2:3:4:5:6:7:8:9",
        _IP + 'trailing garbage after address (at "9")',
    ),
    ("netip/multiple_ellipsis", "1::2::3", _IP + 'multiple :: in address (at ":3")'),
    ("netip/long_group", "12345::", _IP + 'each group must have 4 or less digits (at "12345::")'),
    (
        "netip/useless_ellipsis",
        "1:2:3:4:5:6:7::8",
        _IP + "the :: must expand to at least one field of zeros",
    ),
    ("netip/missing_address", "%eth0", _IP + "missing IPv6 address"),
    ("netip/empty_zone", "fe80::%", _IP + "zone must be a non-empty string"),
    ("netip/ipv6_too_short", "1:2:3", _IP + "address string too short"),
    ("netip/trailing_colon", "1:", _IP + 'colon must be followed by more characters (at ":")'),
    (
        "netip/embedded_ipv4_too_early",
        "1:2:1.2.3.4",
        _IP + 'embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")',
    ),
    (
        "GoTestIP/parse_ipv4_in_ipv6",
        "::ffff:1.2.3.4",
        'IPv4-mapped IPv6 address "{0}" is not allowed',
    ),
    (
        "GoTestIP/parse_ipv6_with_zone",
        "fe80::1%eth0",
        'IP address "{0}" with zone value is not allowed',
    ),
]


@pytest.mark.parametrize(("text", "message"), [pytest.param(t, m, id=i) for i, t, m in ERRORS])
def test_ip_errors(text: str, message: str) -> None:
    assert runtime_error(f'ip("{text}").family() == 4') == "CEL runtime error: " + message.format(
        text
    )


CIDR_ERRORS = [
    ("GoTestCIDR/parse_invalid_ipv4", "192.168.0.0/", _PREFIX + 'bad bits after slash: ""'),
    ("GoTestCIDR/parse_invalid_ipv6", "2001:db8::/", _PREFIX + 'bad bits after slash: ""'),
    ("netip/no_slash", "192.168.0.0", _PREFIX + "no '/'"),
    ("netip/bits_out_of_range", "192.168.0.0/33", _PREFIX + "prefix length out of range"),
    ("netip/bits_leading_zero", "192.168.0.0/01", _PREFIX + 'bad bits after slash: "01"'),
    ("netip/bits_sign", "192.168.0.0/+1", _PREFIX + 'bad bits after slash: "+1"'),
    (
        "netip/bits_overflow",
        "1.2.3.4/99999999999999999999",
        _PREFIX + 'bad bits after slash: "99999999999999999999"',
    ),
    ("netip/prefix_zone", "fe80::1%eth0/64", _PREFIX + "IPv6 zones cannot be present in a prefix"),
    ("netip/prefix_bad_address", "1.2.3/8", _PREFIX + 'ParseAddr("1.2.3"): IPv4 address too short'),
    (
        "GoTestCIDR/ipv4_in_ipv6",
        "::ffff:1.2.3.4/120",
        _CIDR + 'IPv4-mapped IPv6 address "{0}" is not allowed',
    ),
]


@pytest.mark.parametrize(("text", "message"), [pytest.param(t, m, id=i) for i, t, m in CIDR_ERRORS])
def test_cidr_errors(text: str, message: str) -> None:
    assert runtime_error(
        f'cidr("{text}").prefixLength() == 4'
    ) == "CEL runtime error: " + message.format(text)


def test_contains_bad_strings() -> None:
    # Go's cidrContainsIPString hands the parse error to cidrContainsIP, which reports no such overload;
    # containsCIDR passes the parse error on.
    assert (
        runtime_error('cidr("192.168.0.0/24").containsIP("bad")')
        == "CEL runtime error: no such overload"
    )
    assert runtime_error('cidr("192.168.0.0/24").containsCIDR("bad")') == (
        "CEL runtime error: " + _PREFIX.format("bad") + "no '/'"
    )


def test_type_errors() -> None:
    assert str(compile_expression('ip("1.2.3.4")').error) == (
        "CEL compile error: must evaluate to bool or the unknown type, not net.IP"
    )
    assert str(compile_expression('cidr("1.2.3.4/8").family() == 4').error) == (
        "CEL compile error: compilation failed: ERROR: <input>:1:25: found no matching overload for 'family' "
        "applied to 'net.CIDR.()'\n | cidr(\"1.2.3.4/8\").family() == 4\n | ........................^"
    )
    assert str(compile_expression('ip(1) == ip("1.2.3.4")').error) == (
        "CEL compile error: compilation failed: ERROR: <input>:1:3: found no matching overload for 'ip' "
        "applied to '(int)'\n | ip(1) == ip(\"1.2.3.4\")\n | ..^"
    )


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("2001:0db8:0000:0000:0000:0000:0000:0068", "2001:db8::68"),
        ("1:0:0:1:0:0:0:1", "1:0:0:1::1"),
        ("1:0:0:2:0:0:3:4", "1::2:0:0:3:4"),
        ("0:0:0:0:0:0:0:0", "::"),
        ("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"),
        ("::1.2.3.4", "::102:304"),
        ("10.0.0.7", "10.0.0.7"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    bitlen, value, _zone = parse_addr(text)
    assert format_addr(bitlen, value) == canonical
    assert evaluate(f'ip.isCanonical("{canonical}")') is True


URL_TRUE = [
    pytest.param("url('/path').getScheme() == ''", id="GoTestValidationExpressions/URL_parsing/0"),
    pytest.param(
        "url('https://example.com/').getScheme() == 'https'",
        id="GoTestValidationExpressions/URL_parsing/1",
    ),
    pytest.param(
        "url('https://example.com:80/').getHost() == 'example.com:80'",
        id="GoTestValidationExpressions/URL_parsing/2",
    ),
    pytest.param(
        "url('https://example.com/').getHost() == 'example.com'",
        id="GoTestValidationExpressions/URL_parsing/3",
    ),
    pytest.param(
        "url('https://[::1]:80/').getHost() == '[::1]:80'",
        id="GoTestValidationExpressions/URL_parsing/4",
    ),
    pytest.param(
        "url('https://[::1]/').getHost() == '[::1]'", id="GoTestValidationExpressions/URL_parsing/5"
    ),
    pytest.param("url('/path').getHost() == ''", id="GoTestValidationExpressions/URL_parsing/6"),
    pytest.param(
        "url('https://example.com:80/').getHostname() == 'example.com'",
        id="GoTestValidationExpressions/URL_parsing/7",
    ),
    pytest.param(
        "url('https://127.0.0.1/').getHostname() == '127.0.0.1'",
        id="GoTestValidationExpressions/URL_parsing/8",
    ),
    pytest.param(
        "url('https://[::1]/').getHostname() == '::1'",
        id="GoTestValidationExpressions/URL_parsing/9",
    ),
    pytest.param(
        "url('/path').getHostname() == ''", id="GoTestValidationExpressions/URL_parsing/10"
    ),
    pytest.param(
        "url('https://example.com:80/').getPort() == '80'",
        id="GoTestValidationExpressions/URL_parsing/11",
    ),
    pytest.param(
        "url('https://example.com/').getPort() == ''",
        id="GoTestValidationExpressions/URL_parsing/12",
    ),
    pytest.param("url('/path').getPort() == ''", id="GoTestValidationExpressions/URL_parsing/13"),
    pytest.param(
        "url('https://example.com/path').getEscapedPath() == '/path'",
        id="GoTestValidationExpressions/URL_parsing/14",
    ),
    pytest.param(
        "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
        id="GoTestValidationExpressions/URL_parsing/15",
    ),
    pytest.param(
        "url('https://example.com').getEscapedPath() == ''",
        id="GoTestValidationExpressions/URL_parsing/16",
    ),
    pytest.param(
        "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == { 'k1': ['a'], 'k2': ['b', 'c']}",
        id="GoTestValidationExpressions/URL_parsing/17",
    ),
    pytest.param(
        "url('https://example.com/path?key with spaces=value with spaces').getQuery() == { 'key with spaces': ['value with spaces']}",
        id="GoTestValidationExpressions/URL_parsing/18",
    ),
    pytest.param(
        "url('https://example.com/path?').getQuery() == {}",
        id="GoTestValidationExpressions/URL_parsing/19",
    ),
    pytest.param(
        "url('https://example.com/path').getQuery() == {}",
        id="GoTestValidationExpressions/URL_parsing/20",
    ),
    pytest.param(
        "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
        id="GoTestValidationExpressions/URL_parsing/21",
    ),
    pytest.param("isURL('/path') == true", id="GoTestValidationExpressions/URL_parsing/22"),
    pytest.param(
        "isURL('https://a:b:c/') == false", id="GoTestValidationExpressions/URL_parsing/23"
    ),
    pytest.param(
        "isURL('../relative-path') == false", id="GoTestValidationExpressions/URL_parsing/24"
    ),
    pytest.param(
        "url('https:://kubernetes.io/').getHostname() != 'test'",
        id="GoTestValidationExpressions/cost_for_extended_lib_url",
    ),
    pytest.param(
        "url('https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor').getHost() == 'kubernetes.io:80'",
        id="neturl/26",
    ),
    pytest.param(
        "url('http://[fe80::1%25eth0]:8080/').getHost() == '[fe80::1%eth0]:8080'", id="neturl/27"
    ),
    pytest.param(
        "url('http://[fe80::1%25eth0]:8080/').getHostname() == 'fe80::1%eth0'", id="neturl/28"
    ),
    pytest.param("url('http://u@s:er@a/').getHost() == 'a'", id="neturl/29"),
    pytest.param("url('http://a/b%2Fc').getEscapedPath() == '/b%2Fc'", id="neturl/30"),
    pytest.param("url('http://a/ü').getEscapedPath() == '/%C3%BC'", id="neturl/31"),
    pytest.param("url('http://a/b?x=1;y=2&z=3').getQuery() == {'z': ['3']}", id="neturl/32"),
    pytest.param("url('http://a/b?x=%zz&z=3+4').getQuery() == {'z': ['3 4']}", id="neturl/33"),
    pytest.param("url('mailto:someone@example.com').getScheme() == 'mailto'", id="neturl/34"),
    pytest.param("url('mailto:someone@example.com').getHost() == ''", id="neturl/35"),
    pytest.param("url('HTTP://A/').getScheme() == 'http'", id="neturl/36"),
    pytest.param("url('HTTP://A/') == url('http://A/')", id="neturl/37"),
    pytest.param("url('http://a/b') == url('http://a/b#')", id="neturl/38"),
    pytest.param("url('http://a/b#c') == url('http://a/b#c')", id="neturl/39"),
    pytest.param("url('*').getEscapedPath() == '*'", id="neturl/40"),
    pytest.param("url('/a?').getQuery() == {}", id="neturl/41"),
    pytest.param("url('http://a:80/').getPort() == '80'", id="neturl/42"),
    pytest.param("url('http://a:/').getPort() == ''", id="neturl/43"),
    pytest.param("url('http:/a').getHost() == ''", id="neturl/44"),
    pytest.param("url('//a/b').getHost() == 'a'", id="neturl/45"),
    pytest.param("isURL('//a/b')", id="neturl/46"),
    pytest.param("isURL('http:')", id="neturl/47"),
    pytest.param("url('http:').getEscapedPath() == ''", id="neturl/48"),
]


@pytest.mark.parametrize("expression", URL_TRUE)
def test_url_true(expression: str) -> None:
    assert evaluate(expression) is True


URL_ERRORS = [
    pytest.param(
        "url('https://a:b:c/').getHost() == ''",
        'URL parse error during conversion from string: parse "https://a:b:c/": invalid port ":b:c" after host',
        id="neturl/error0",
    ),
    pytest.param(
        "url('foo://a:b:c/').getHost() == 'a:b:c'",
        'URL parse error during conversion from string: parse "foo://a:b:c/": invalid port ":c" after host',
        id="neturl/error1",
    ),
    pytest.param(
        "url('../relative').getHost() == ''",
        'URL parse error during conversion from string: parse "../relative": invalid URI for request',
        id="neturl/error2",
    ),
    pytest.param(
        "url('').getHost() == ''",
        'URL parse error during conversion from string: parse "": empty url',
        id="neturl/error3",
    ),
    pytest.param(
        "url('http://a\\x01').getHost() == ''",
        'URL parse error during conversion from string: parse "http://a\\x01": net/url: invalid control character in URL',
        id="neturl/error4",
    ),
    pytest.param(
        "url('http://[::1').getHost() == ''",
        "URL parse error during conversion from string: parse \"http://[::1\": missing ']' in host",
        id="neturl/error5",
    ),
    pytest.param(
        "url('http://x[::1]').getHost() == ''",
        'URL parse error during conversion from string: parse "http://x[::1]": invalid IP-literal',
        id="neturl/error6",
    ),
    pytest.param(
        "url('http://[1.2.3.4]/').getHost() == ''",
        'URL parse error during conversion from string: parse "http://[1.2.3.4]/": invalid IP-literal',
        id="neturl/error7",
    ),
    pytest.param(
        "url('http://[fe80::x]/').getHost() == ''",
        'URL parse error during conversion from string: parse "http://[fe80::x]/": invalid host: ParseAddr("fe80::x"): each colon-separated field must have at least one digit (at "x")',
        id="neturl/error8",
    ),
    pytest.param(
        "url('http://a%2/').getHost() == ''",
        'URL parse error during conversion from string: parse "http://a%2/": invalid URL escape "%2"',
        id="neturl/error9",
    ),
    pytest.param(
        "url('http://a%41/').getHost() == 'aA'",
        'URL parse error during conversion from string: parse "http://a%41/": invalid URL escape "%41"',
        id="neturl/error10",
    ),
    pytest.param(
        "url('http://a%01/').getHost() == ''",
        'URL parse error during conversion from string: parse "http://a%01/": invalid URL escape "%01"',
        id="neturl/error11",
    ),
    pytest.param(
        "url('http://a b/').getHost() == ''",
        'URL parse error during conversion from string: parse "http://a b/": invalid character " " in host name',
        id="neturl/error12",
    ),
    pytest.param(
        "url('http://u s@a/').getHost() == 'a'",
        'URL parse error during conversion from string: parse "http://u s@a/": net/url: invalid userinfo',
        id="neturl/error13",
    ),
    pytest.param(
        "url('http://u%zz@a/').getHost() == 'a'",
        'URL parse error during conversion from string: parse "http://u%zz@a/": invalid URL escape "%zz"',
        id="neturl/error14",
    ),
    pytest.param(
        "url('http://a/%zz').getHost() == 'a'",
        'URL parse error during conversion from string: parse "http://a/%zz": invalid URL escape "%zz"',
        id="neturl/error15",
    ),
    pytest.param(
        "url('http://a/b#c%zz') == url('http://a/b')",
        'URL parse error during conversion from string: parse "http://a/b#c%zz": invalid URL escape "%zz"',
        id="neturl/error16",
    ),
    pytest.param(
        "url('http://a:x/').getPort() == ''",
        'URL parse error during conversion from string: parse "http://a:x/": invalid port ":x" after host',
        id="neturl/error17",
    ),
]


@pytest.mark.parametrize(("expression", "message"), URL_ERRORS)
def test_url_errors(expression: str, message: str) -> None:
    assert runtime_error(expression) == "CEL runtime error: " + message


def test_url_type_errors() -> None:
    assert str(compile_expression("url('https://example.com')").error) == (
        "CEL compile error: must evaluate to bool or the unknown type, not kubernetes.URL"
    )
    assert str(compile_expression("url('a').getScheme() == 1").error) == (
        "CEL compile error: compilation failed: ERROR: <input>:1:22: found no matching overload for '_==_' "
        "applied to '(string, int)'\n | url('a').getScheme() == 1\n | .....................^"
    )
