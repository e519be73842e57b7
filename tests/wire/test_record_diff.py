"""changed_fields: what a crawl changed in a record, as a subscriber comparing the JSON would see it."""
from __future__ import annotations

import dataclasses

from spiderduck.core.record import Image, Redirect, UrlRecord
from spiderduck.core.status import Status
from spiderduck.wire.record_diff import changed_fields
from spiderduck.wire.record_proto import StructuredData

OLD = UrlRecord(url="http://s.test/1", status=Status.OK, final_url="http://a.test/p", http_status=200,
                title="T", image=Image("http://a.test/i.png", 10, 20), redirects=(Redirect("http://s.test/1", 301),),
                structured_data={"json-ld": [{"@type": "NewsArticle", "n": 1}]}, share_count=3,
                first_seen=10.0, fetched_at=20.0, expires_at=30.0, content_ref="f@0+1", etag='"v1"')


def test_a_first_crawl_changed_every_field_it_filled_in_field_order():
    assert changed_fields(None, OLD) == ("status", "http_status", "redirects", "title", "image",
                                         "structured_data", "final_url", "etag")


def test_the_same_page_again_changed_nothing_but_bookkeeping():
    again = dataclasses.replace(OLD, url="http://other.test/", share_count=9, first_seen=1.0,
                                fetched_at=99.0, expires_at=199.0, content_ref="g@5+6",
                                structured_data=StructuredData.from_dict(OLD.structured_data))
    assert changed_fields(OLD, again) == ()


def test_each_changed_field_is_named_once():
    new = dataclasses.replace(OLD, title="T2", image=Image("http://a.test/i.png", 10, 21),
                              redirects=(), structured_data={"json-ld": [{"@type": "NewsArticle", "n": 2}]},
                              etag="", description="now described")
    assert changed_fields(OLD, new) == ("redirects", "title", "description", "image", "structured_data", "etag")


def test_a_page_that_failed_says_which_fields_it_lost():
    failed = UrlRecord(url=OLD.url, status=Status.HTTP_ERROR, final_url=OLD.final_url, http_status=503,
                       error="HTTP 503", fetched_at=40.0, redirects=OLD.redirects)
    assert changed_fields(OLD, failed) == ("status", "http_status", "title", "image", "structured_data",
                                           "error", "etag")


def test_a_source_that_changed_while_its_value_did_not_is_no_change():
    from spiderduck.core.record import FieldSource
    before = dataclasses.replace(OLD, provenance=(FieldSource("title", "og:title"),))
    after = dataclasses.replace(OLD, provenance=(FieldSource("title", "twitter:title"),))
    assert changed_fields(before, after) == ()
    assert "provenance" not in changed_fields(None, after)


def test_how_the_page_was_read_is_bookkeeping_not_a_change():
    static = dataclasses.replace(OLD, fetch_mode="static")
    rendered = dataclasses.replace(OLD, fetch_mode="rendered")
    assert changed_fields(static, rendered) == ()
    assert "fetch_mode" not in changed_fields(None, rendered)
    assert changed_fields(static, dataclasses.replace(rendered, title="Rendered")) == ("title",)
