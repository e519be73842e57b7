"""A forgotten URL (on the denylist, spiderduck.bus.denylist) through the wired stages: never
fetched, nothing stored, one FORGOTTEN event naming only the URL and the status. Real SQLite and
real WARC files; the denylist is an offline one built from entries (the watched one, on a real
nats-server, is tests/e2e/test_forgotten_urls.py)."""
from __future__ import annotations

from spiderduck.bus.denylist import DENYLIST_LAG, Denylist, Entry
from spiderduck.core import config
from spiderduck.core import metrics
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import Redirect, UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.events import processed_event
from spiderduck.scheduler.forgetting import follow_forgets
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.task import Resolution, Submission
from spiderduck.stores.content import ContentStore, FetchedContent
from support.service import wait_until
from support.warc import gzip_members, warc_records
from support.scheduler_stores import stores  # noqa: F401 -- the fixture

HTML = (("Content-Type", "text/html"),)
NOW = 1_000_000.0
SHORT, PAGE, OTHER = "http://short.test/a", "http://gone.test/page", "http://kept.test/"


def page(url: str, title: str = "T") -> FetchResult:
    return FetchResult(url, Status.OK, 200, HTML, f"<title>{title}</title>".encode(), fetched_at=NOW)


def moved(url: str, to: str) -> FetchResult:
    return FetchResult(url, Status.OK, 301, (("Location", to),), fetched_at=NOW)


class Wired:
    """The pipeline over real stores, its hops answered from `answers` and counted, its events kept."""

    def __init__(self, stores, denylist: Denylist, answers: dict[str, FetchResult]):
        self.metadata, self.content = stores
        self.asked: list[str] = []
        self.events = []

        async def fetch_hop(url, **_):
            self.asked.append(url)
            return answers.get(url) or FetchResult(url, Status.CONNECTION_ERROR, error="refused")

        async def publish(outcome, key):
            self.events.append(processed_event(outcome, now=NOW))
        self.pipeline = build_pipeline(config.load(env={}), metadata=self.metadata, content=self.content,
                                       fetch_hop=fetch_hop, publish=publish, metrics=metrics.recorder("test"),
                                       denylist=denylist, clock=lambda: NOW)

    async def submit(self, url: str):
        (outcome,) = await self.pipeline(Submission(f'{{"urls": ["{url}"]}}'.encode()))
        return outcome


def logged(tmp_path) -> list[bytes]:
    return [m for f in (tmp_path / "content").glob("*.warc.gz*") for m in gzip_members(f.read_bytes())]


def logged_urls(tmp_path) -> set[str]:
    """The WARC-Target-URI of every record in the content log (read back with warcio)."""
    return {headers.get("WARC-Target-URI", "") for headers, _ in warc_records(tmp_path / "content")}


def assert_forgotten(outcome, event, submitted: str) -> None:
    assert outcome.record.status is Status.FORGOTTEN and outcome.resolution is Resolution.REJECTED
    assert event.url == submitted and event.status == Status.FORGOTTEN
    assert event.resolution == Resolution.REJECTED
    # Nothing of a page: the event's record is the URL and the status alone.
    assert {f.name for f, _ in event.metadata.ListFields()} == {"url", "status"}


async def test_a_forgotten_url_is_answered_forgotten_without_a_fetch_or_a_write(stores, tmp_path):
    wired = Wired(stores, Denylist([Entry(url=PAGE)]), {PAGE: page(PAGE), OTHER: page(OTHER)})
    outcome = await wired.submit(PAGE)
    assert_forgotten(outcome, wired.events[-1], PAGE)
    assert wired.asked == []
    assert await wired.metadata.get(PAGE) is None and logged(tmp_path) == []

    kept = await wired.submit(OTHER)            # the list forgets what it names, nothing else
    assert kept.record.status is Status.OK and (await wired.metadata.get(OTHER)).title == "T"


async def test_a_link_to_a_forgotten_page_ends_before_the_page_is_asked_for(stores, tmp_path):
    wired = Wired(stores, Denylist([Entry(url=PAGE)]), {SHORT: moved(SHORT, PAGE), PAGE: page(PAGE)})
    outcome = await wired.submit(SHORT)
    assert_forgotten(outcome, wired.events[-1], SHORT)
    assert wired.asked == [SHORT]               # the shortener, never the page
    # Not even the shortener's record, which would name the forgotten page, nor its 301.
    assert await wired.metadata.get(SHORT) is None and await wired.metadata.get(PAGE) is None
    assert logged(tmp_path) == []


async def test_a_forgotten_domain_forgets_each_of_its_hosts(stores, tmp_path):
    wired = Wired(stores, Denylist([Entry(domain="gone.test")]), {})
    outcome = await wired.submit("http://www.gone.test/any/thing?x=1")
    assert_forgotten(outcome, wired.events[-1], "http://www.gone.test/any/thing?x=1")
    assert wired.asked == [] and logged(tmp_path) == []


async def test_a_stored_record_naming_a_forgotten_page_is_no_answer_and_gets_no_share(stores):
    metadata, _ = stores
    # The shortener's record was stored before its page was forgotten (the forget itself
    # clears it; this is the window before it did): it still answers FRESH from the record.
    record = UrlRecord(url=SHORT, status=Status.OK, final_url=PAGE, title="T", fetched_at=NOW,
                       expires_at=NOW + 3600, redirects=(Redirect(SHORT, 301),))
    await metadata.put(PAGE, record, {SHORT, PAGE})
    wired = Wired(stores, Denylist([Entry(url=PAGE)]), {})
    outcome = await wired.submit(SHORT)
    assert_forgotten(outcome, wired.events[-1], SHORT)
    assert wired.asked == []
    assert (await metadata.get(SHORT)).share_count == 0      # the sighting was not counted


async def test_a_related_url_on_the_denylist_is_never_fetched(stores):
    body = b'<title>T</title><meta property="og:image" content="http://gone.test/i.png">'
    answers = {OTHER: FetchResult(OTHER, Status.OK, 200, HTML, body, fetched_at=NOW)}
    wired = Wired(stores, Denylist([Entry(domain="gone.test")]), answers)
    outcome = await wired.submit(OTHER)
    assert outcome.record.status is Status.OK
    assert not [u for u in wired.asked if "gone.test" in u]


class ForgottenWhileWritten(ContentStore):
    """Real WARC files; the URL goes on the list (a Forget arriving) as its first record is written."""

    def __init__(self, content: ContentStore, denylist: Denylist, url: str):
        self.content, self.denylist, self.url = content, denylist, url

    async def append(self, item):
        ref = await self.content.append(item)
        if item.url == self.url:
            await self.denylist.add([self.url], reason="a takedown, mid-crawl")
        return ref

    async def read(self, content_ref):
        return await self.content.read(content_ref)

    async def read_following(self, content_ref, max_bytes, max_records):
        return await self.content.read_following(content_ref, max_bytes, max_records)

    async def forget(self, urls, domain=""):
        return await self.content.forget(urls, domain)


async def test_a_url_forgotten_while_its_crawl_is_written_is_removed_again(stores, bus_js, tmp_path):
    metadata, content = stores
    denylist = await Denylist.open(bus_js[1])
    try:
        racing = ForgottenWhileWritten(content, denylist, PAGE)
        wired = Wired((metadata, racing), denylist, {SHORT: moved(SHORT, PAGE), PAGE: page(PAGE)})
        outcome = await wired.submit(SHORT)
    finally:
        await denylist.close()
    assert_forgotten(outcome, wired.events[-1], SHORT)
    # The record and its aliases were written, then forgotten again (MetadataStore.forget), and
    # the WARC records of the chain erased from the file (ContentStore.forget).
    assert await metadata.get(SHORT) is None and await metadata.get(PAGE) is None
    assert not {SHORT, PAGE} & logged_urls(tmp_path)


class Sealable(ForgottenWhileWritten):
    """A content store whose writer seals its open file on request (counted), as HDFS's."""

    def __init__(self, content: ContentStore):
        super().__init__(content, Denylist(), "")
        self.sealed = 0

    async def roll(self):
        self.sealed += 1


async def test_the_open_content_file_is_sealed_when_the_list_gains_entries(stores, bus_js):
    denylist = await Denylist.open(bus_js[1])
    store = Sealable(stores[1])
    try:
        async with follow_forgets(denylist, store):
            await denylist.add([PAGE], reason="takedown")
            await wait_until(lambda: _sealed(store), DENYLIST_LAG * 5, "the content file sealed")
    finally:
        await denylist.close()
    assert store.sealed == 1


async def _sealed(store: Sealable) -> bool:
    return store.sealed > 0


async def test_a_scheduler_erases_new_entries_from_its_own_content_files(stores, bus_js, tmp_path):
    """file:// content is each scheduler's own folder in a deployment, out of the metadata API's
    reach: the scheduler erases what the list gains from it, the URLs and the domains."""
    _, content = stores
    for url in (PAGE, OTHER, "http://www.domain.test/x"):
        await content.append(FetchedContent(url, 200, HTML, b"<title>T</title>", NOW))
    assert {PAGE, OTHER, "http://www.domain.test/x"} <= logged_urls(tmp_path)
    denylist = await Denylist.open(bus_js[1])
    try:
        async with follow_forgets(denylist, content, erase=True):
            await denylist.add([PAGE], "domain.test", reason="takedown", by="admin")

            async def erased():
                return not {PAGE, "http://www.domain.test/x"} & logged_urls(tmp_path)
            await wait_until(erased, DENYLIST_LAG * 5, "the scheduler to erase the new entries' records")
    finally:
        await denylist.close()
    assert OTHER in logged_urls(tmp_path)
