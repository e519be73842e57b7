"""src/spiderduck/core/telemetry.py: no secret of a URL reaches a span. A URL attribute (`url.full`)
loses its userinfo and the values of the query parameters `telemetry.redact_query_params` names
(a lower-cased name containing an entry), and so does every URL in an exception a span records."""
from __future__ import annotations

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from spiderduck.core import config, telemetry
from spiderduck.core.errors import ConfigError
from spiderduck.core.settings import TelemetrySettings

DEFAULTS = TelemetrySettings().redact_query_params




def _everything(exporter) -> str:
    """Every attribute, event attribute and status of the finished spans, as one text."""
    parts = []
    for s in exporter.get_finished_spans():
        parts += [str(dict(s.attributes)), str(s.status.description)]
        parts += [str(dict(e.attributes)) for e in s.events]
    return "\n".join(parts)


def test_the_default_names_are_opentelemetrys_and_ours():
    names = {n.lower() for n in DEFAULTS}
    assert {"awsaccesskeyid", "signature", "sig", "x-goog-signature"} <= names      # semantic conventions
    assert {"token", "session", "password", "passwd", "key", "secret", "code", "auth"} <= names


@pytest.mark.parametrize("url, expected", [
    ("https://h.test/p?session_token=abc&q=1", "https://h.test/p?session_token=REDACTED&q=1"),
    ("https://h.test/?access_token=a&X-Amz-Signature=b&X-Amz-Date=20250101",
     "https://h.test/?access_token=REDACTED&X-Amz-Signature=REDACTED&X-Amz-Date=20250101"),
    ("https://s3.test/o?AWSAccessKeyId=AK&Signature=S&Expires=9",
     "https://s3.test/o?AWSAccessKeyId=REDACTED&Signature=REDACTED&Expires=9"),
    ("https://h.test/?Session%5FToken=abc", "https://h.test/?Session%5FToken=REDACTED"),  # decoded name
    ("https://h.test/?token&page=2", "https://h.test/?token&page=2"),        # no value: nothing to hide
    ("https://h.test/cb#access_token=abc&state=x", "https://h.test/cb#access_token=REDACTED&state=x"),
    ("http://alice:PASSW0RD@h.test/login?q=a", "http://h.test/login?q=a"),  # userinfo dropped
    ("https://h.test/a?q=token", "https://h.test/a?q=token"),               # a value is not a name
    ("https://h.test/plain", "https://h.test/plain"),
])
def test_redact_url(url, expected):
    assert telemetry.redact_url(url, [n.lower() for n in DEFAULTS]) == expected


def test_redact_url_without_names_only_drops_the_userinfo():
    assert telemetry.redact_url("http://u:p@h.test/?token=t", []) == "http://h.test/?token=t"


def test_a_spans_url_attributes_are_redacted_when_given_and_when_set(spans):
    url = "http://alice:PASSW0RD@h.test/login?session_token=SECRET1&q=kept"
    with telemetry.span("Fetch", attributes={"url.full": url, "spiderduck.purpose": "page"}) as span:
        telemetry.set_attribute(span, "url.full", url + "&X-Amz-Signature=SIG2")
    telemetry.set_attribute(None, "url.full", url)      # off (no span): nothing
    (done,) = spans.get_finished_spans()
    assert done.attributes["url.full"] == "http://h.test/login?session_token=REDACTED&q=kept&X-Amz-Signature=REDACTED"
    assert done.attributes["spiderduck.purpose"] == "page"
    for secret in ("alice", "PASSW0RD", "SECRET1", "SIG2"):
        assert secret not in _everything(spans)


def test_an_exception_a_span_records_has_its_urls_redacted(spans):
    with pytest.raises(ValueError):
        with telemetry.span("ResolveUrl"):
            raise ValueError("still resolving http://alice:PASSW0RD@h.test/?auth=SECRET1 after 12s")
    (done,) = spans.get_finished_spans()
    (event,) = done.events
    assert event.name == "exception" and event.attributes["exception.type"] == "ValueError"
    assert event.attributes["exception.message"] == "still resolving http://h.test/?auth=REDACTED after 12s"
    assert "ValueError: still resolving http://h.test/?auth=REDACTED" in event.attributes["exception.stacktrace"]
    assert done.status.description == "ValueError: still resolving http://h.test/?auth=REDACTED after 12s"
    for secret in ("alice", "PASSW0RD", "SECRET1"):
        assert secret not in _everything(spans)


def test_the_names_come_from_the_setting():
    exporter = InMemorySpanExporter()
    shutdown = telemetry.setup(TelemetrySettings(redact_query_params=["Ticket"]), "test", exporter=exporter)
    try:
        with telemetry.span("Fetch", attributes={"url.full": "https://h.test/?my_ticket=T1&token=kept"}):
            pass
    finally:
        shutdown()
    (done,) = exporter.get_finished_spans()
    assert done.attributes["url.full"] == "https://h.test/?my_ticket=REDACTED&token=kept"


def test_the_setting_loads_from_the_environment_and_refuses_an_empty_name():
    loaded = config.load(env={"SPIDERDUCK_TELEMETRY__REDACT_QUERY_PARAMS": "[sid, token]"})
    assert loaded.telemetry.redact_query_params == ["sid", "token"]
    assert config.load(env={"SPIDERDUCK_TELEMETRY__REDACT_QUERY_PARAMS": "[]"}).telemetry.redact_query_params == []
    with pytest.raises(ConfigError, match="telemetry.redact_query_params"):
        config.load(env={"SPIDERDUCK_TELEMETRY__REDACT_QUERY_PARAMS": '[token, " "]'})
    with pytest.raises(ConfigError, match="telemetry.redact_query_params"):
        TelemetrySettings(redact_query_params="token")
