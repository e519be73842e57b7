"""A forgotten URL (on the denylist, spiderduck.bus.denylist) through the wired stages: never
fetched, nothing stored, one FORGOTTEN event naming only the URL and the status. Real SQLite and
real WARC files; the denylist is an offline one built from entries (the watched one, on a real
nats-server, is tests/e2e/test_forgotten_urls.py)."""
from __future__ import annotations

from spiderduck.bus.denylist import Denylist, Entry
from spiderduck.core import config
from spiderduck.core import metrics
from spiderduck.core.fetch import FetchResult
from spiderduck.core.record import Redirect, UrlRecord
from spiderduck.core.status import Status
from spiderduck.scheduler.events import processed_event
from spiderduck.scheduler.pipeline import build_pipeline
from spiderduck.scheduler.task import Resolution, Submission
from support.warc import gzip_members

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
