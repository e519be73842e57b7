"""The address guard refuses every non-public address unless allowed."""
from __future__ import annotations

import pytest

from fetcher.guard import AddressGuard, BlockedAddress
from fetcher.resolver import GuardedResolver

REFUSED = ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
           "100.64.0.1", "224.0.0.1", "240.0.0.1", "255.255.255.255", "::1", "fe80::1", "fc00::1",
           "::ffff:10.0.0.1", "ff02::1", "192.0.2.1"]


@pytest.mark.parametrize("address", REFUSED)
def test_non_public_addresses_are_refused_by_default(address):
    assert not AddressGuard().is_allowed(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "8.8.8.8"])
def test_public_addresses_are_allowed(address):
    assert AddressGuard().is_allowed(address)


def test_allowed_networks_open_a_hole():
    guard = AddressGuard(["127.0.0.0/8"])
    assert guard.is_allowed("127.0.0.5")
    assert not guard.is_allowed("10.0.0.1")
    with pytest.raises(BlockedAddress):
        guard.check("x.test", "10.0.0.1")


async def test_resolver_prefers_exact_overrides_and_applies_the_guard():
    resolver = GuardedResolver(AddressGuard(["127.0.0.0/8"]),
                               {"*.test": "127.0.0.1", "inner.test": "10.0.0.9"})
    [result] = await resolver.resolve("shop.test", 80)
    assert result["host"] == "127.0.0.1"
    with pytest.raises(BlockedAddress):
        await resolver.resolve("inner.test", 80)
