"""Which addresses a fetcher may connect to.

Fetchers fetch attacker-chosen URLs, so every address that is not globally
routable is refused unless it lies inside `fetcher.allowed_networks`. The check
runs on every address a host resolves to, on an IP literal before connecting
(aiohttp does not resolve those), and on the address actually connected to,
on every hop. URL hosts reach it in WHATWG form: `src/spiderduck/core/urls.py` has already
turned `2130706433`, `0177.0.0.1`, `0x7f.1` and `127.1` into `127.0.0.1`.

Refused: the blocks of `_REFUSED` (the IANA special-purpose registries' "not
globally reachable" entries, as in Stripe's smokescreen), and, as a backstop,
whatever Python's `ipaddress` calls non-global, multicast or reserved.

Addresses that carry the IPv4 address their packets are delivered to are judged
as that IPv4 address, for the refusal and for `allowed_networks` alike (allowing
127.0.0.0/8 admits ::ffff:127.0.0.1):
    ::ffff:0:0/96     IPv4-mapped (RFC 4291 §2.5.5.2): the socket connects over IPv4;
    64:ff9b::/96      NAT64 well-known prefix (RFC 6052): the translator connects to
                      the last 32 bits, so a public one passes (DNS64 networks
                      resolve every IPv4-only site there) and 64:ff9b::a00:1 does not;
    2002::/16         6to4 (RFC 3056): bits 16-47 are the tunnel's IPv4 endpoint.
Refused outright, whatever they embed: IPv4-compatible ::/96 (deprecated, RFC 4291
§2.5.5.1), local-use NAT64 64:ff9b:1::/48 (RFC 8215; where the IPv4 address sits
depends on the operator's prefix) and Teredo 2001::/32 (RFC 4380; the relay
reaches an obfuscated client address; obsolete).
"""
from __future__ import annotations

import ipaddress
from typing import Iterable

from spiderduck.core.errors import SpiderDuckError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_REFUSED = tuple(ipaddress.ip_network(n) for n in (
    # IPv4
    "0.0.0.0/8",          # "this network", 0.0.0.0 unspecified (RFC 791)
    "10.0.0.0/8",         # private (RFC 1918)
    "100.64.0.0/10",      # shared address space, carrier-grade NAT (RFC 6598)
    "127.0.0.0/8",        # loopback (RFC 1122)
    "169.254.0.0/16",     # link-local, cloud metadata (RFC 3927)
    "172.16.0.0/12",      # private (RFC 1918)
    "192.0.0.0/24",       # IETF protocol assignments (RFC 6890), its two anycast /32s too
    "192.0.2.0/24",       # documentation TEST-NET-1 (RFC 5737)
    "192.88.99.0/24",     # 6to4 relay anycast, deprecated (RFC 7526)
    "192.168.0.0/16",     # private (RFC 1918)
    "198.18.0.0/15",      # benchmarking (RFC 2544)
    "198.51.100.0/24",    # documentation TEST-NET-2 (RFC 5737)
    "203.0.113.0/24",     # documentation TEST-NET-3 (RFC 5737)
    "224.0.0.0/4",        # multicast (RFC 5771)
    "240.0.0.0/4",        # reserved (RFC 1112), 255.255.255.255 broadcast (RFC 919)
    # IPv6
    "::/128",             # unspecified (RFC 4291)
    "::1/128",            # loopback (RFC 4291)
    "::/96",              # IPv4-compatible, deprecated (RFC 4291 §2.5.5.1)
    "64:ff9b:1::/48",     # local-use NAT64 (RFC 8215)
    "100::/64",           # discard-only (RFC 6666)
    "2001::/32",          # Teredo (RFC 4380)
    "2001::/23",          # IETF protocol assignments: benchmarking, ORCHID, ... (RFC 2928)
    "2001:db8::/32",      # documentation (RFC 3849)
    "3fff::/20",          # documentation (RFC 9637)
    "5f00::/16",          # segment routing SIDs (RFC 9602)
    "fc00::/7",           # unique local (RFC 4193)
    "fe80::/10",          # link-local (RFC 4291)
    "fec0::/10",          # site-local, deprecated (RFC 3879)
    "ff00::/8",           # multicast (RFC 4291)
))

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class BlockedAddress(SpiderDuckError):
    """Raised (not an OSError, so aiohttp passes it through) when only refused addresses remain."""

    def __init__(self, host: str, address: str):
        super().__init__(f"{host} resolves to {address}, a non-public address")
        self.host = host
        self.address = address


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address that packets to `ip` are delivered to (mapped, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    return ip.sixtofour


def is_public(ip: IPAddress) -> bool:
    """Globally routable: in no refused block and global by `ipaddress` too (no carve-outs)."""
    if any(ip in net for net in _REFUSED if net.version == ip.version):
        return False
    return ip.is_global and not ip.is_multicast and not ip.is_reserved


class AddressGuard:
    def __init__(self, allowed_networks: Iterable[str] = ()):
        self._allowed = tuple(ipaddress.ip_network(n, strict=False) for n in allowed_networks)

    def is_allowed(self, address: str | IPAddress) -> bool:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
        except ValueError:
            return False
        judged = (embedded_ipv4(ip) if ip.version == 6 else None) or ip
        if any(a in net for a in {ip, judged} for net in self._allowed if net.version == a.version):
            return True
        return is_public(judged)

    def check(self, host: str, address: str) -> None:
        if not self.is_allowed(address):
            raise BlockedAddress(host, address)
