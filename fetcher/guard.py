"""Which addresses a fetcher may connect to.

Fetchers fetch attacker-chosen URLs, so every address that is not globally
routable (private, loopback, link-local, multicast, reserved, unspecified,
shared/CGNAT, documentation, IPv4-mapped forms of those) is refused unless it
lies inside `fetcher.allowed_networks`. The check runs on every address a host
resolves to and on the address actually connected to, on every hop.
"""
from __future__ import annotations

import ipaddress
from typing import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BlockedAddress(Exception):
    """Raised (not an OSError, so aiohttp passes it through) when only refused addresses remain."""

    def __init__(self, host: str, address: str):
        super().__init__(f"{host} resolves to {address}, a non-public address")
        self.host = host
        self.address = address


class AddressGuard:
    def __init__(self, allowed_networks: Iterable[str] = ()):
        self._allowed = tuple(ipaddress.ip_network(n, strict=False) for n in allowed_networks)

    def is_allowed(self, address: str | IPAddress) -> bool:
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0] if isinstance(address, str) else address)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address):
            mapped = ip.ipv4_mapped or ip.sixtofour
            if mapped is not None:
                ip = mapped
        if any(ip in net for net in self._allowed if net.version == ip.version):
            return True
        return ip.is_global and not ip.is_multicast and not ip.is_reserved

    def check(self, host: str, address: str) -> None:
        if not self.is_allowed(address):
            raise BlockedAddress(host, address)
