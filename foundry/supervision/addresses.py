"""Where a URL leads: a public web host, or a place inside, however its host is spelt.

A URL is `inside` when it names this machine, its network or its cloud: a scheme other than
http(s) (`file:`, `gopher:`, ...), a loopback, private, link-local (the cloud metadata address
169.254.169.254), shared, reserved, multicast or unspecified address in any spelling a resolver
or a browser accepts (decimal `2852039166`, octal `0251.0376.0251.0376`, hex `0xa9fea9fe`,
short `127.1`, IPv6 and IPv4 inside IPv6: mapped, compatible, 6to4, NAT64, Teredo), a name
that means such a place (`localhost`, `*.local`, `*.internal`, a name without a dot) or that
spells an IP address for a wildcard DNS service (`169.254.169.254.nip.io`,
`7f000001.nip.io`), or it is built to be read two ways: user information before the host
(`http://example.com@169.254.169.254/`), backslashes, control characters, spaces or percent
escapes in the host, or a host that does not parse. It is `public` when it is an http(s) URL to
any other host. A URL `carries data` out when its host, path or credentials do (outward.py's
`data_in_url`) or a query or fragment value reads as data rather than words: long, or a run
that reads as an encoding or a token (`?q=sqlglot` is a search; `?d=REFUQUJB...` is not). Names
are not resolved (no network is used): a public name whose DNS answers with an inside address
is not caught here, which is why a server's network is confined too.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
import urllib.parse
from typing import Literal

from foundry.supervision.outward import data_in_url

Reach = Literal["public", "inside", "not-a-url"]

MAX_PLAIN_QUERY_VALUE = 40  # characters of a query value, decoded: a longer one is data
MAX_PLAIN_QUERY_PAIRS = 8
_ENCODED_RUN = re.compile(r"[A-Za-z0-9+/=_-]{16,}")

WEB_SCHEMES = frozenset({"http", "https"})
INSIDE_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
INSIDE_SUFFIXES = (
    ".localhost", ".local", ".internal", ".intranet", ".lan", ".home", ".corp", ".home.arpa",
    ".localdomain", ".private",
)  # fmt: skip
# services whose names answer with the address spelt in them
ADDRESS_IN_NAME_SERVICES = (
    ".nip.io", ".sslip.io", ".xip.io", ".traefik.me", ".localtest.me", ".lvh.me",
    ".vcap.me", ".lacolhost.com", ".localh.st", ".fuf.me", ".nip.direct", ".1u.ms",
)  # fmt: skip
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]{0,31}):")
_NUMERIC_LABEL = re.compile(r"^(?:0x[0-9a-f]*|[0-9]+)$", re.IGNORECASE)
_DOTTED_QUAD = re.compile(r"(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?:[.-]|$)")
_HEX_ADDRESS_LABEL = re.compile(r"^(?:0x)?[0-9a-f]{8}$", re.IGNORECASE)
_UNSAFE_IN_AUTHORITY = re.compile(r"[\\\s\x00-\x1f\x7f%]")
# IPv6 ranges that carry an IPv4 address in their last 32 bits
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.ip_network("::/96")


def reach(text: str) -> Reach:
    """Where the URL `text` leads (see the module's description); `not-a-url` when it names no
    scheme."""
    stripped = text.strip()
    scheme = _SCHEME.match(stripped)
    if scheme is None:
        return "not-a-url"
    if scheme.group(1).lower() not in WEB_SCHEMES:
        return "inside"
    host = _host(stripped)
    return "inside" if host is None or _host_is_inside(host) else "public"


def carries_data(text: str) -> bool:
    """Whether the URL `text` carries data out (see the module's description)."""
    stripped = text.strip()
    try:
        parts = urllib.parse.urlsplit(stripped)
    except ValueError:
        return True
    if data_in_url(urllib.parse.urlunsplit(parts._replace(query="", fragment=""))) is not None:
        return True
    # a fragment never reaches the server, but the page's code reads it and may send it on
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    pairs += urllib.parse.parse_qsl(parts.fragment, keep_blank_values=True) or [
        ("", parts.fragment)
    ]
    if len(pairs) > MAX_PLAIN_QUERY_PAIRS:
        return True
    return any(_reads_as_data(word) for pair in pairs for word in pair)


def _reads_as_data(value: str) -> bool:
    if len(value) > MAX_PLAIN_QUERY_VALUE:
        return True
    return any(
        any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        for run in _ENCODED_RUN.findall(value)
    )


def _host(url: str) -> str | None:
    """The URL's host as a resolver would take it; None when it can be read two ways."""
    after_scheme = url.split(":", 1)[1]
    if not after_scheme.startswith("//"):
        return None  # `http:example.com`: browsers and libraries disagree on what it means
    authority = re.split(r"[/?#]", after_scheme[2:], maxsplit=1)[0]
    if "@" in authority or _UNSAFE_IN_AUTHORITY.search(authority):
        return None
    try:
        host = urllib.parse.urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    host = unicodedata.normalize("NFKC", host).rstrip(".").lower()
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    return host


def _host_is_inside(host: str) -> bool:
    if host.startswith("[") or ":" in host:  # an IPv6 literal (urlsplit drops the brackets)
        return _address_is_inside(host.strip("[]").split("%", 1)[0])
    labels = host.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):  # a resolver reads it as an IPv4 address, or fails
        return _ipv4_is_inside(host)
    if "." not in host or host in INSIDE_NAMES or host.endswith(INSIDE_SUFFIXES):
        return True
    return _spells_an_address(host)


def _ipv4_is_inside(host: str) -> bool:
    """An IPv4 address in any form `inet_aton` takes; one it refuses is not a host at all."""
    try:
        packed = socket.inet_aton(host)
    except OSError:
        return True
    return _address_is_inside(socket.inet_ntoa(packed))


def _address_is_inside(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return True
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried_ipv4(address)
        if carried is not None:
            return _address_is_inside(str(carried))
    return not address.is_global or address.is_multicast


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for, if it stands for one."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _NAT64) or (
        address in _COMPATIBLE and int(address) > 1
    ):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _spells_an_address(host: str) -> bool:
    """A name that spells an IP address inside it: a wildcard DNS service answers with that
    address, and any other such name is taken to do the same."""
    if host.endswith(ADDRESS_IN_NAME_SERVICES):
        return True
    quad = _DOTTED_QUAD.search(host)
    if quad is not None and all(int(part) <= 255 for part in quad.groups()):
        return True
    return any(_HEX_ADDRESS_LABEL.match(label) for label in host.split(".")[:-1])
