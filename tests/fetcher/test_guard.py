"""The address guard refuses every non-public address unless allowed: a table of addresses, then
the fetcher over real sockets (a redirect hop or a related fetch into a private address:
tests/e2e/test_related_fetches.py)."""
from __future__ import annotations

import pytest

from spiderduck.core import config
from spiderduck.core.status import Status
from spiderduck.fetcher.fetcher import Fetcher
from spiderduck.fetcher.guard import AddressGuard, BlockedAddress
from spiderduck.fetcher.ownership import AllShards
from spiderduck.fetcher.resolver import GuardedResolver

PUBLIC, REFUSED = True, False

# address, verdict with no allowed_networks, what it is. Embedded IPv4 forms are judged as the
# IPv4 address they carry (mapped, NAT64 64:ff9b::/96, 6to4); Teredo, IPv4-compatible and
# local-use NAT64 are refused whatever they carry (see src/spiderduck/fetcher/guard.py).
TABLE = [
    ("8.8.8.8", PUBLIC, "public v4"),
    ("93.184.216.34", PUBLIC, "public v4 (example.com)"),
    ("100.63.255.254", PUBLIC, "just below CGNAT"),
    ("100.128.0.1", PUBLIC, "just above CGNAT"),
    ("172.32.0.1", PUBLIC, "just above 172.16/12"),
    ("0.0.0.0", REFUSED, "unspecified"),
    ("0.1.2.3", REFUSED, "this network 0/8"),
    ("10.1.2.3", REFUSED, "RFC 1918 10/8"),
    ("100.64.0.1", REFUSED, "CGNAT"),
    ("100.127.255.254", REFUSED, "CGNAT, top"),
    ("127.0.0.1", REFUSED, "loopback"),
    ("127.255.255.254", REFUSED, "loopback, top"),
    ("169.254.169.254", REFUSED, "link-local, cloud metadata"),
    ("172.16.0.1", REFUSED, "RFC 1918 172.16/12"),
    ("172.31.255.254", REFUSED, "RFC 1918 172.16/12, top"),
    ("192.0.0.9", REFUSED, "IETF protocol assignments 192.0.0/24"),
    ("192.0.2.1", REFUSED, "TEST-NET-1"),
    ("192.88.99.1", REFUSED, "6to4 relay anycast, deprecated"),
    ("192.168.1.1", REFUSED, "RFC 1918 192.168/16"),
    ("198.18.0.1", REFUSED, "benchmarking"),
    ("198.19.255.254", REFUSED, "benchmarking, top"),
    ("198.51.100.7", REFUSED, "TEST-NET-2"),
    ("203.0.113.7", REFUSED, "TEST-NET-3"),
    ("224.0.0.1", REFUSED, "multicast"),
    ("239.255.255.250", REFUSED, "multicast, SSDP"),
    ("240.0.0.1", REFUSED, "reserved 240/4"),
    ("255.255.255.255", REFUSED, "broadcast"),
    ("2606:4700::1", PUBLIC, "public v6"),
    ("2001:4860:4860::8888", PUBLIC, "public v6 in 2001::/16, outside 2001::/23"),
    ("2002:808:808::1", PUBLIC, "6to4 of 8.8.8.8"),
    ("64:ff9b::808:808", PUBLIC, "NAT64 of 8.8.8.8"),
    ("::ffff:8.8.8.8", PUBLIC, "mapped 8.8.8.8"),
    ("::", REFUSED, "unspecified"),
    ("::1", REFUSED, "loopback"),
    ("::ffff:127.0.0.1", REFUSED, "mapped loopback"),
    ("::ffff:10.0.0.1", REFUSED, "mapped RFC 1918"),
    ("::ffff:169.254.169.254", REFUSED, "mapped link-local"),
    ("0:0:0:0:0:ffff:7f00:1", REFUSED, "mapped loopback, hex spelling"),
    ("::127.0.0.1", REFUSED, "IPv4-compatible loopback"),
    ("::8.8.8.8", REFUSED, "IPv4-compatible, deprecated whatever it carries"),
    ("64:ff9b::7f00:1", REFUSED, "NAT64 of loopback"),
    ("64:ff9b::a00:1", REFUSED, "NAT64 of 10.0.0.1"),
    ("64:ff9b::c000:201", REFUSED, "NAT64 of TEST-NET-1"),
    ("64:ff9b:1::808:808", REFUSED, "local-use NAT64"),
    ("2002:7f00:1::1", REFUSED, "6to4 of loopback"),
    ("2002:a00:1::1", REFUSED, "6to4 of 10.0.0.1"),
    ("2002:a9fe:a9fe::1", REFUSED, "6to4 of cloud metadata"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", REFUSED, "Teredo"),
    ("2001:2::1", REFUSED, "benchmarking v6"),
    ("2001:db8::1", REFUSED, "documentation v6"),
    ("3fff::1", REFUSED, "documentation v6 (RFC 9637)"),
    ("100::1", REFUSED, "discard-only"),
    ("5f00::1", REFUSED, "SRv6 SIDs"),
    ("fc00::1", REFUSED, "ULA"),
    ("fd12:3456::1", REFUSED, "ULA fd"),
    ("fe80::1", REFUSED, "link-local"),
    ("fe80::1%eth0", REFUSED, "link-local with a zone"),
    ("fec0::1", REFUSED, "site-local, deprecated"),
    ("ff02::1", REFUSED, "multicast"),
    ("4000::1", REFUSED, "unallocated, outside 2000::/3"),
    ("64:ff9c::1", REFUSED, "just outside NAT64, unallocated ::/8 (smokescreen passes it)"),
    ("not-an-address", REFUSED, "not an address"),
]


@pytest.mark.parametrize("address,verdict", [pytest.param(a, v, id=f"{a} {what}") for a, v, what in TABLE])
def test_only_globally_routable_addresses_pass(address, verdict):
    assert AddressGuard().is_allowed(address) is verdict


CARVE_OUTS = [
    (["127.0.0.0/8"], "127.0.0.1", True),
    (["127.0.0.0/8"], "::ffff:127.0.0.1", True),       # the same socket, judged as its IPv4
    (["127.0.0.0/8"], "64:ff9b::7f00:1", True),        # NAT64 and 6to4 too: one rule for embedding
    (["127.0.0.0/8"], "10.0.0.1", False),
    (["127.0.0.0/8"], "::1", False),                   # IPv6 loopback is not in an IPv4 network
    (["127.0.0.0/8"], "::127.0.0.1", False),           # IPv4-compatible is never judged as IPv4
    (["127.0.0.1/8"], "127.9.9.9", True),              # host bits accepted, as config accepts them
    (["10.0.0.0/8"], "10.255.0.1", True),
    (["10.0.0.0/8"], "::ffff:10.0.0.1", True),
    (["10.0.0.0/8"], "172.16.0.1", False),
    (["fd00::/8"], "fd12::1", True),
    (["fd00::/8"], "fc00::1", False),
    (["fec0::/10"], "fec0::1", True),
    (["::1/128"], "::1", True),
    (["::1/128"], "127.0.0.1", False),
    ([], "8.8.8.8", True),                              # public stays public whatever is allowed
]


@pytest.mark.parametrize("allowed,address,verdict", CARVE_OUTS)
def test_allowed_networks_open_a_hole(allowed, address, verdict):
    assert AddressGuard(allowed).is_allowed(address) is verdict


def test_check_raises_naming_host_and_address():
    with pytest.raises(BlockedAddress, match="x.test resolves to 10.0.0.1"):
        AddressGuard(["127.0.0.0/8"]).check("x.test", "10.0.0.1")


async def test_resolver_prefers_exact_overrides_and_applies_the_guard():
    resolver = GuardedResolver(AddressGuard(["127.0.0.0/8"]),
                               {"*.test": "127.0.0.1", "inner.test": "10.0.0.9"})
    [result] = await resolver.resolve("shop.test", 80)
    assert result["host"] == "127.0.0.1"
    with pytest.raises(BlockedAddress):
        await resolver.resolve("inner.test", 80)


# --- over real sockets -------------------------------------------------------------------------

def settings(allowed: list[str], overrides: dict[str, str] | None = None):
    return config.load(env={}, overrides={"fetcher.allowed_networks": allowed,
                                          "fetcher.dns_overrides": overrides or {},
                                          "fetcher.default_rate": 100.0}).fetcher


LITERALS = ["http://2130706433:{port}/", "http://0177.0.0.1:{port}/", "http://0x7f.1:{port}/",
            "http://127.1:{port}/", "http://0x7f000001:{port}/", "http://127.0.0.1.:{port}/"]


async def test_ip_literals_in_any_notation_are_judged_as_the_address_they_reach(localweb):
    # WHATWG parsing (src/spiderduck/core/urls.py) makes every notation 127.0.0.1; that is what the guard sees.
    localweb.page("127.0.0.1", "/", "<title>loopback</title>")
    literals = [u.format(port=localweb.port) for u in LITERALS]
    mapped = f"http://[::ffff:7f00:1]:{localweb.port}/"
    async with Fetcher(settings([]), ownership=AllShards()) as f:
        refused = [await f.fetch(url) for url in [*literals, mapped]]
    for result in refused:
        assert result.status is Status.BLOCKED_ADDRESS, result
    assert {r.url for r in refused[:-1]} == {f"http://127.0.0.1:{localweb.port}/"}
    assert "127.0.0.1" in refused[0].error and "7f00:1" in refused[-1].error
    assert localweb.hits == []                           # nothing was ever sent, robots.txt included
    # The same URLs with loopback allowed do reach the origin: the address checked is the real one.
    async with Fetcher(settings(["127.0.0.0/8"]), ownership=AllShards()) as f:
        allowed = [await f.fetch(url) for url in literals]
    assert {(r.status, r.http_status) for r in allowed} == {(Status.OK, 200)}
    assert len(localweb.hits_for("127.0.0.1", "/")) == len(literals)


async def test_a_public_looking_name_that_resolves_to_loopback_is_refused(localweb):
    localweb.page("www.example.com", "/", "<title>not really example.com</title>")
    localweb.page("cdn.example.net", "/", "<title>nor this</title>")
    names = {"www.example.com": "127.0.0.1", "cdn.example.net": "::ffff:127.0.0.1"}
    async with Fetcher(settings([], names), ownership=AllShards()) as f:
        results = [await f.fetch(localweb.url(name)) for name in names]
    assert [r.status for r in results] == [Status.BLOCKED_ADDRESS] * 2
    assert "www.example.com resolves to 127.0.0.1" in results[0].error
    assert localweb.hits == []
