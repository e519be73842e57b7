"""What a Forget may name (metadata_api.forget) and what a repeated forget reaches
(metadata_api.forgetting.widened), alone; the calls themselves over real gRPC, NATS, SQLite and
WARC files are in test_forget.py."""
from __future__ import annotations

import asyncio

import pytest

from spiderduck.bus.denylist import Denylist, Entry
from spiderduck.core.urls import InvalidDomain
from spiderduck.core.urls import forgettable_domain
from spiderduck.metadata_api.forgetting import Forgetter, PartsFailed, one_line, widened
from spiderduck.stores.sqlite_metadata import SqliteMetadataStore


@pytest.mark.parametrize("text, domain", [
    ("example.com", "example.com"), ("Example.COM.", "example.com"), ("bbc.co.uk", "bbc.co.uk"),
    ("bücher.de", "xn--bcher-kva.de"), ("", ""),
])
def test_a_registrable_domain_is_forgettable(text, domain):
    assert forgettable_domain(text) == domain


@pytest.mark.parametrize("text, said", [
    ("com", "public suffix"), ("co.uk", "public suffix"), ("127.0.0.1", "IP address"),
    ("[::1]", "IP address"), ("https://example.com/a", "a URL in place of a domain"),
    ("example.com/a", "a URL in place of a domain"), ("news.bbc.co.uk", "under the registrable domain bbc.co.uk"),
    ("*.example.com", "wildcard"), ("exa mple.com", "not a host name"),
])
def test_anything_else_is_refused_saying_why(text, said):
    with pytest.raises(InvalidDomain, match=said):
        forgettable_domain(text)


def test_a_repeat_reaches_the_urls_forgotten_with_the_ones_asked():
    asked = "https://short.test/s"
    entries = [
        Entry(url="https://other.test/old", reason="ticket 7", by="oncall", at=5.0),    # before: another forget
        Entry(url=asked, reason="ticket 7", by="oncall", at=10.0),
        Entry(url="https://site.test/page", reason="ticket 7", by="oncall", at=10.5),   # found by the store
        Entry(url="https://site.test/other", reason="ticket 8", by="oncall", at=11.0),  # another reason
        Entry(url="https://site.test/third", reason="ticket 7", by="web", at=11.0),     # another caller
        Entry(domain="gone.test", reason="ticket 9", by="oncall", at=12.0),
        Entry(url="https://elsewhere.test/a", reason="ticket 9", by="oncall", at=12.1),
    ]
    assert widened({asked}, entries) == {asked, "https://site.test/page"}
    assert widened(set(), entries, "gone.test") == {"https://elsewhere.test/a"}
    assert widened({"https://never.test/"}, entries) == {"https://never.test/"}


def test_a_reason_is_one_line_in_the_audit_log():
    line = one_line("GDPR request 12\nforget by=admin records=0")
    assert "\n" not in line and line.startswith("'GDPR request 12\\n")


class Timed:
    """A real SQLite store whose forget notes when it began, on the loop's clock."""

    def __init__(self, store):
        self.store, self.began = store, None

    async def forget(self, urls, domain=""):
        self.began = asyncio.get_running_loop().time()
        return await self.store.forget(urls, domain)


async def test_the_removal_waits_for_the_schedulers_to_see_the_list(bus_js, tmp_path):
    """A crawl a scheduler writes before it sees the new entry must be written before the removal
    starts: the removal begins `settle` after the URL is on the list, not at once."""
    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    denylist = await Denylist.open(bus_js[1])
    try:
        timed = Timed(store)
        forgetter = Forgetter(timed, None, bus_js[1], denylist, erase=_no_events, settle=0.5)
        listed_by = asyncio.get_running_loop().time()
        with pytest.raises(PartsFailed):           # no content store here: that part is named
            await forgetter.forget(["http://gone.test/a"], reason="r", by="admin")
        assert denylist.forgotten("http://gone.test/a")
        assert timed.began - listed_by >= 0.5
    finally:
        await denylist.close()
        await store.close()


async def _no_events(js, urls, domain=""):
    return 0


async def test_a_domain_forget_lists_the_domain_and_only_the_urls_outside_it(bus_js, tmp_path):
    """Every URL of the domain is denied by its one entry; a URL of another domain that redirected
    into it is listed on its own (a big domain's forget does not list each of its URLs)."""
    from spiderduck.core.record import UrlRecord
    from spiderduck.core.status import Status
    store = await SqliteMetadataStore.open(str(tmp_path / "m.db"))
    denylist = await Denylist.open(bus_js[1])
    try:
        await store.put("http://a.test/x", UrlRecord(url="http://short.other/1", status=Status.OK,
                                                     final_url="http://a.test/x"),
                        ["http://short.other/1", "http://a.test/x"])
        await store.put("http://www.a.test/y", UrlRecord(url="http://www.a.test/y", status=Status.OK),
                        ["http://www.a.test/y"])
        forgetter = Forgetter(store, None, bus_js[1], denylist, erase=_no_events, settle=0)
        with pytest.raises(PartsFailed):           # no content store here: that part is named
            await forgetter.forget([], "a.test", reason="r", by="admin")
        assert {(e.url, e.domain) for e in denylist.entries()} == {("", "a.test"), ("http://short.other/1", "")}
        assert await store.get("http://short.other/1") is None and await store.get("http://www.a.test/y") is None
    finally:
        await denylist.close()
        await store.close()
