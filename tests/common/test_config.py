"""Settings: defaults < file < environment < overrides; durations; clear errors."""
from __future__ import annotations

import pytest

from common import config
from common.errors import ConfigError


def test_defaults_match_the_design():
    s = config.load(env={})
    assert s.fetcher.default_rate == 1.0 and s.fetcher.max_redirects == 10
    assert s.fetcher.max_body_bytes == 2097152 and s.recrawl_after == 7 * 86400
    assert s.metadata_api.listen == "127.0.0.1:50051" and s.fetcher.listen == "127.0.0.1:50052"
    assert s.metadata_store_url == "sqlite:///./var/metadata.db"
    assert s.content_store_url == "file://./var/content"


def test_precedence_file_then_environment_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("recrawl_after: 12h\nfetcher:\n  default_rate: 2\n  max_redirects: 3\n"
                    "  rate_overrides: {slow.test: 0.5}\n")
    s = config.load(str(path), env={"SPIDERDUCK_FETCHER__DEFAULT_RATE": "5",
                                    "SPIDERDUCK_FETCHER__ALLOWED_NETWORKS": "[127.0.0.0/8]"},
                    overrides={"fetcher.max_redirects": "4"})
    assert s.recrawl_after == 12 * 3600
    assert s.fetcher.default_rate == 5.0
    assert s.fetcher.max_redirects == 4
    assert s.fetcher.rate_overrides == {"slow.test": 0.5}
    assert s.fetcher.allowed_networks == ["127.0.0.0/8"]


@pytest.mark.parametrize("text,seconds", [("7d", 604800), ("90s", 90), ("250ms", 0.25), (30, 30)])
def test_durations(text, seconds):
    assert config.parse_duration(text) == seconds


@pytest.mark.parametrize("overrides,message", [
    ({"fetcher.nope": 1}, "unknown config key: fetcher.nope"),
    ({"fetcher.default_rate": "fast"}, "fetcher.default_rate"),
    ({"recrawl_after": "soon"}, r"recrawl_after: not a duration: 'soon'"),
    ({"fetcher.lease_ttl": "7x"}, r"fetcher.lease_ttl: not a duration: '7x'"),
    ({"process.related_fetches": "flase"}, r"process.related_fetches: bad value 'flase': expected true or false"),
    ({"fetcher.default_rate": -1}, r"fetcher.default_rate: bad value -1.0: must be a finite number, not negative"),
    ({"fetcher.default_rate": "nan"}, r"fetcher.default_rate: bad value nan"),
    ({"fetcher.max_body_bytes": "-5"}, r"fetcher.max_body_bytes: bad value -5"),
    ({"scheduler.ack_wait": "-3s"}, r"scheduler.ack_wait"),
    ({"fetcher.rate_overrides": {"a.test": -2}}, r"fetcher.rate_overrides.a.test: bad value -2.0"),
    ({"scheduler.max_in_flight": True}, r"scheduler.max_in_flight: bad value True"),
    ({"process.parser": "lxml"}, "process.parser: 'lxml' is not one of selectolax, html5lib"),
    ({"process.prefer_dates": "newest"}, "process.prefer_dates"),
])
def test_bad_values_name_the_key_and_the_value(overrides, message):
    with pytest.raises(ConfigError, match=message):
        config.load(env={}, overrides=overrides)


def test_process_settings_select_parser_and_dates():
    settings = config.load(env={"SPIDERDUCK_PROCESS__PARSER": "html5lib"},
                           overrides={"process.prefer_dates": "published", "process.related_timeout": "30s"})
    assert settings.process.parser == "html5lib"
    assert settings.process.prefer_dates == "published"
    assert settings.process.related_timeout == 30.0


@pytest.mark.parametrize("word,value", [("true", True), ("Yes", True), ("on", True), ("1", True),
                                        ("false", False), ("NO", False), ("off", False), ("0", False)])
def test_booleans_are_read_strictly(word, value):
    assert config.load(env={}, overrides={"process.related_fetches": word}).process.related_fetches is value
