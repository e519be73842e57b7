"""Settings: defaults < file < environment < overrides; durations; clear errors."""
from __future__ import annotations

import os
import re

import pytest

from spiderduck.core import config
from spiderduck.core.errors import ConfigError


def test_defaults_match_the_design():
    s = config.load(env={})
    assert s.fetcher.default_rate == 1.0 and s.fetcher.max_redirects == 10
    assert s.fetcher.max_body_bytes == 2097152 and s.recrawl_after == 7 * 86400
    assert s.metadata_api.listen == "127.0.0.1:50051" and s.fetcher.listen == "127.0.0.1:50052"
    # data_dir ./var, made absolute (the CLI finds a running `up` from any directory).
    var = os.path.abspath("var")
    assert s.data_dir == var
    assert s.metadata_store_url == f"sqlite:///{var}/metadata.db"
    assert s.content_store_url == f"file://{var}/content"
    assert s.shutdown_grace == 10 and s.nats_replicas == 1
    assert s.streams.events_max_age == 7 * 86400 and s.streams.urls_max_bytes == 0


def test_data_dir_is_absolute_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config.load(env={}, overrides={"data_dir": "state"}).data_dir == str(tmp_path / "state")


@pytest.mark.parametrize("key, value, words", [
    ("nats_replicas", "0", "nats_replicas: bad value 0"),
    ("nats_replicas", "7", "nats_replicas: bad value 7"),
    ("shutdown_grace", "-1", "shutdown_grace: bad value -1"),
    ("shutdown_grace", "soon", "shutdown_grace: not a duration: 'soon'"),
    ("streams.dead_max_bytes", "-5", "streams.dead_max_bytes: bad value -5"),
    ("streams.urls_max_age", "forever", "streams.urls_max_age: not a duration"),
])
def test_nats_and_stop_keys_are_checked(key, value, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
        config.load(env={}, overrides={key: value})


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


@pytest.mark.parametrize("text", ["s3cr3t #2024", "0123", "12_34", "1:30:00", "on", "null", "[a]", " x "])
def test_a_text_key_from_the_environment_or_a_flag_is_taken_as_it_is(text):
    """A token in a Secret reaches web.admin_token as it was written, not as YAML reads it
    ("0123" would be 83, "s3cr3t #2024" would lose its comment, "null" would turn it off)."""
    assert config.load(env={"SPIDERDUCK_WEB__ADMIN_TOKEN": text}).web.admin_token == text
    assert config.load(env={}, overrides={"web.admin_token": text}).web.admin_token == text
    # A number, a boolean or a list is still read as YAML.
    s = config.load(env={"SPIDERDUCK_WEB__RECENT": "0x10"}, overrides={"fetcher.allowed_networks": "[10.0.0.0/8]"})
    assert s.web.recent == 16 and s.fetcher.allowed_networks == ["10.0.0.0/8"]


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
    ({"fetcher.max_body_bytes": ".inf"}, r"fetcher.max_body_bytes: bad value inf: cannot convert"),
    ({"fetcher.file_head_bytes": 0}, r"fetcher.file_head_bytes: 0 must be at least 1"),
    ({"fetcher.file_max_requests": 0}, r"fetcher.file_max_requests: 0 must be at least 1"),
    ({"fetcher.file_max_requests": "1e99"}, r"fetcher.file_max_requests: bad value"),
    ({"fetcher": 5}, r"^fetcher: expected a mapping, got 5$"),
    ({"scheduler.ack_wait": "-3s"}, r"scheduler.ack_wait"),
    ({"fetcher.rate_overrides": {"a.test": -2}}, r"fetcher.rate_overrides.a.test: bad value -2.0"),
    ({"scheduler.max_in_flight": True}, r"scheduler.max_in_flight: bad value True"),
    ({"scheduler.max_ack_pending": 100}, r"scheduler.max_ack_pending: 100 is below one scheduler's max_in_flight"),
    ({"process.parser": "lxml"}, "process.parser: 'lxml' is not one of selectolax, html5lib"),
    ({"process.prefer_dates": "published"}, "process.prefer_dates: removed: published_time is always"),
    ({"fetcher.allowed_networks": ["10.0.0.0/33"]}, r"fetcher.allowed_networks: bad value '10.0.0.0/33'"),
    ({"fetcher.allowed_networks": "127.0.0.0/8,banana"}, r"fetcher.allowed_networks: bad value 'banana'"),
    ({"fetcher.allowed_networks": ["fc00::/129"]}, r"fetcher.allowed_networks: bad value 'fc00::/129'"),
])
def test_bad_values_name_the_key_and_the_value(overrides, message):
    with pytest.raises(ConfigError, match=message):
        config.load(env={}, overrides=overrides)


def test_allowed_networks_are_checked_at_load_and_may_have_host_bits():
    # As src/spiderduck/fetcher/guard.py reads them: 10.0.0.1/8 is 10.0.0.0/8, a bare address is one host.
    networks = ["10.0.0.1/8", "127.0.0.0/8", "::1", "fd00::/8"]
    settings = config.load(env={}, overrides={"fetcher.allowed_networks": networks})
    assert settings.fetcher.allowed_networks == networks


def test_process_settings_select_parser_and_timeouts():
    settings = config.load(env={"SPIDERDUCK_PROCESS__PARSER": "html5lib"},
                           overrides={"process.related_timeout": "30s"})
    assert settings.process.parser == "html5lib"
    assert settings.process.related_timeout == 30.0


@pytest.mark.parametrize("word,value", [("true", True), ("Yes", True), ("on", True), ("1", True),
                                        ("false", False), ("NO", False), ("off", False), ("0", False)])
def test_booleans_are_read_strictly(word, value):
    assert config.load(env={}, overrides={"process.related_fetches": word}).process.related_fetches is value


def _leaves(cls=config.Settings, prefix=""):
    """(key path, type hint) of every leaf key of Settings."""
    import dataclasses
    import typing
    hints = typing.get_type_hints(cls, include_extras=True)
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            yield from _leaves(hints[f.name], f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", hints[f.name]


# A key named like an amount of time: it must be typed Duration, and only such keys are.
_TIME_NAME = re.compile(r"[_.](timeout|ttl|after|for|age|wait|delay|interval|grace|window|margin|retry)$"
                        r"|backoff_(base|max)$"
                        r"|^retention\.")      # retention.metadata, .content: how long each is kept
_DURATIONS = [path for path, hint in _leaves() if config.is_duration(hint)]


def test_every_key_named_like_a_duration_is_typed_duration_and_no_other():
    named = {path for path, _ in _leaves() if _TIME_NAME.search(path)}
    assert named == set(_DURATIONS)
    assert len(_DURATIONS) == 49


@pytest.mark.parametrize("path", _DURATIONS)
def test_every_duration_key_reads_units_and_stays_seconds(path):
    below = ({"min_recrawl_after": "0s"} if path == "max_recrawl_after"       # bounds kept in order
             else {"scheduler.hop_timeout": "30s"} if path == "scheduler.url_timeout" else {})
    settings = config.load(env={"SPIDERDUCK_" + path.upper().replace(".", "__"): "2m"},
                           overrides={path: "90s", **below})
    node = settings
    for part in path.split("."):
        node = getattr(node, part)
    assert node == 90.0 and type(node) is float
    with pytest.raises(ConfigError, match=f"{re.escape(path)}: not a duration: '90 sec'"):
        config.load(env={}, overrides={path: "90 sec"})


def test_recrawl_bounds_out_of_order_are_refused():
    with pytest.raises(ConfigError, match=r"min_recrawl_after \(7200s\) is more than max_recrawl_after \(3600s\)"):
        config.load(env={}, overrides={"min_recrawl_after": "2h", "max_recrawl_after": "1h"})


def test_durations_are_known_by_type_not_by_name():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class Probe:
        ack_wait: float = 1.0          # a duration's name, but a plain number
        soon: config.Duration = 0.0    # no duration's name, but a Duration
    probe = config._coerce(Probe, "", {"soon": "2m"})
    assert probe.soon == 120.0
    with pytest.raises(ConfigError, match="ack_wait: bad value '2m'"):
        config._coerce(Probe, "", {"ack_wait": "2m"})
    # A plain number of Settings (a factor, not a time) takes no unit either.
    with pytest.raises(ConfigError, match="fetcher.backoff_factor: bad value '2s'"):
        config.load(env={}, overrides={"fetcher.backoff_factor": "2s"})


def test_meta_refresh_max_delay_is_a_duration_not_negative_and_zero_turns_it_off():
    from spiderduck.core.settings import ProcessSettings
    assert config.load(env={}).process.meta_refresh_max_delay == 5.0
    assert config.load(env={}, overrides={"process.meta_refresh_max_delay": "1500ms"}).process.meta_refresh_max_delay == 1.5
    assert config.load(env={}, overrides={"process.meta_refresh_max_delay": 0}).process.meta_refresh_max_delay == 0
    for bad in (-1, "-5s", "soon", float("nan")):
        with pytest.raises(ConfigError, match="process.meta_refresh_max_delay"):
            config.load(env={}, overrides={"process.meta_refresh_max_delay": bad})
    with pytest.raises(ConfigError, match="process.meta_refresh_max_delay"):
        ProcessSettings(meta_refresh_max_delay=-1.0)


@pytest.mark.parametrize("written", ["off", "'off'", "triggered", "all"])
def test_process_honesty_reads_as_written_in_yaml_even_an_unquoted_off(tmp_path, written):
    """YAML 1.1 reads an unquoted `off` as false: `process.honesty: off` still means off, from a
    file, the environment or --set; anything but the three modes (true, a typo) is refused."""
    path = tmp_path / "c.yaml"
    path.write_text(f"process:\n  honesty: {written}\n")
    assert config.load(str(path), env={}).process.honesty == written.strip("'")
    assert config.load(env={}, overrides={"process.honesty": written.strip("'")}).process.honesty == written.strip("'")
    assert config.load(env={"SPIDERDUCK_PROCESS__HONESTY": written.strip("'")}).process.honesty == written.strip("'")


@pytest.mark.parametrize("written", ["on", "true", "sometimes", "1"])
def test_process_honesty_refuses_anything_else(tmp_path, written):
    path = tmp_path / "c.yaml"
    path.write_text(f"process:\n  honesty: {written}\n")
    with pytest.raises(ConfigError, match="process.honesty"):
        config.load(str(path), env={})
