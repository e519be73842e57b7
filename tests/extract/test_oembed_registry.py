"""The oEmbed registry (issue 41): a page's URL to its provider's endpoint, only for hosts a
provider's scheme names; the operator's providers file adds to the shipped list or replaces an
entry; hostile providers files are refused at config load, and matching stays linear."""
from __future__ import annotations

import json
import time

import pytest

from spiderduck.core import config, oembed_providers
from spiderduck.core.errors import ConfigError
from spiderduck.core.oembed_providers import Endpoint, Provider, ProvidersError
from spiderduck.extract import oembed_registry
from spiderduck.extract.oembed_registry import Registry, glob_match, merged


def provider(name: str, endpoint: str, *schemes: str, url: str = "") -> dict:
    return {"provider_name": name, "provider_url": url or f"https://{name.lower()}.test/",
            "endpoints": [{"schemes": list(schemes), "url": endpoint}]}


def registry(*entries: dict) -> Registry:
    return Registry(oembed_providers.parse(json.dumps(list(entries))))


VIDEO = provider("Video", "https://video.test/api/oembed.{format}", "https://video.test/watch/*",
                 "https://*.video.test/v/*", "http://*.*.deep.test/*/photos/*")


def test_a_named_hosts_url_maps_to_its_endpoint_with_the_url_and_format():
    reg = registry(VIDEO)
    assert reg.endpoint_for("https://video.test/watch/12?t=3#frag") == (
        "https://video.test/api/oembed.json?url=https%3A%2F%2Fvideo.test%2Fwatch%2F12%3Ft%3D3&format=json")
    # a subdomain under `*.`, http or https alike, any port
    assert reg.endpoint_for("http://m.video.test:8080/v/9").startswith("https://video.test/api/oembed.json?url=")
    assert reg.endpoint_for("https://a.b.deep.test/x/photos/1") and not reg.endpoint_for("https://a.deep.test/x/photos/1")


@pytest.mark.parametrize("url", [
    "https://video.test/about",             # the host is named, no scheme of it matches
    "https://video.test/v/9",               # `*.video.test` needs a subdomain
    "https://evilvideo.test/watch/1",       # not a subdomain
    "https://video.test.evil.test/watch/1",
    "https://other.test/watch/1",
    "ftp://video.test/watch/1", "not a url", "", "https://[::1/watch/1",
])
def test_no_endpoint_for_a_url_no_scheme_names(url):
    assert registry(VIDEO).endpoint_for(url) is None


def test_an_endpoint_with_a_query_gets_the_url_added_to_it():
    reg = registry(provider("Q", "https://q.test/oembed?key=1", "https://q.test/*"))
    assert reg.endpoint_for("https://q.test/a") == "https://q.test/oembed?key=1&url=https%3A%2F%2Fq.test%2Fa&format=json"


def test_the_shipped_list_maps_real_providers():
    """oembed.com's list, as the micawber distribution carries it (a dependency): hundreds of
    providers, the two entries it holds that no URL could match (`spotify:*`, two URLs joined by
    " - ") left out rather than refusing the list."""
    providers = oembed_registry.shipped()
    assert len(providers) > 300
    schemes = [s for p in providers for e in p.endpoints for s in e.schemes]
    assert "spotify:*" not in schemes and not any(" " in s for s in schemes)
    reg = oembed_registry.load()
    assert reg.endpoint_for("https://www.youtube.com/watch?v=dQw4w9WgXcQ") == (
        "https://www.youtube.com/oembed?url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3DdQw4w9WgXcQ&format=json")
    assert reg.endpoint_for("https://vimeo.com/7073899") == (
        "https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F7073899&format=json")
    assert reg.endpoint_for("https://example.com/watch?v=1") is None


def test_the_operators_file_is_strict_where_the_shipped_list_is_lenient():
    data = json.dumps([{"provider_name": "S", "provider_url": "https://s.test/", "endpoints": [
        {"schemes": ["spotify:*", "https://s.test/*"], "url": "https://s.test/oembed"},
        {"schemes": ["https://s.test/x/*"], "url": "ftp://s.test/oembed"}]}])
    with pytest.raises(oembed_providers.ProvidersError, match="spotify"):
        oembed_providers.parse(data)
    (kept,) = oembed_providers.parse(data, lenient=True)
    assert kept.endpoints == (oembed_providers.Endpoint(("https://s.test/*",), "https://s.test/oembed"),)


def test_the_operators_providers_come_first_and_replace_by_name_or_url():
    shipped = oembed_providers.parse(json.dumps([
        provider("Video", "https://old.test/oembed", "https://video.test/*"),
        provider("Photos", "https://old.test/photos", "https://photos.test/*", url="https://photos.test"),
        provider("Kept", "https://kept.test/oembed", "https://kept.test/*")]))
    ours = oembed_providers.parse(json.dumps([
        provider("VIDEO", "https://new.test/oembed", "https://video.test/*"),
        provider("Pictures", "https://new.test/photos", "https://photos.test/*", url="https://PHOTOS.test/"),
        provider("Added", "https://added.test/oembed", "https://added.test/*")]))
    names = [p.name for p in merged(shipped, ours)]
    assert names == ["VIDEO", "Pictures", "Added", "Kept"]
    reg = Registry(merged(shipped, ours))
    assert reg.endpoint_for("https://video.test/a").startswith("https://new.test/oembed?")
    assert reg.endpoint_for("https://photos.test/a").startswith("https://new.test/photos?")
    assert reg.endpoint_for("https://kept.test/a").startswith("https://kept.test/oembed?")


def test_an_operators_file_replaces_a_shipped_provider(tmp_path, monkeypatch):
    monkeypatch.setattr(oembed_registry, "shipped", lambda: (
        Provider("YouTube", "https://www.youtube.com/", (Endpoint(("https://*.youtube.com/watch*",),
                                                                   "https://www.youtube.com/oembed"),)),))
    path = tmp_path / "providers.json"
    path.write_text(json.dumps([provider("YouTube", "https://mirror.test/oembed", "https://*.youtube.com/watch*")]))
    oembed_registry.load.cache_clear()
    try:
        assert oembed_registry.load(str(path)).endpoint_for("https://www.youtube.com/watch?v=1").startswith(
            "https://mirror.test/oembed?url=")
        assert oembed_registry.load().endpoint_for("https://www.youtube.com/watch?v=1").startswith(
            "https://www.youtube.com/oembed?url=")
    finally:
        oembed_registry.load.cache_clear()


# --- hostile providers files --------------------------------------------------------------------

def load_with(tmp_path, data: bytes | str):
    path = tmp_path / "providers.json"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return config.load(None, env={}, overrides={"process.oembed_providers": str(path)})


@pytest.mark.parametrize("data, words", [
    (b"[" + b" " * oembed_providers.MAX_FILE_BYTES + b"]", "over 4,194,304 bytes"),
    ("[" * 100_000 + "]" * 100_000, "not JSON"),
    ("{not json", "not JSON"),
    ('{"provider_name": "x"}', "not a list"),
    (json.dumps([{"endpoints": []}]), "provider_name"),
    (json.dumps([provider("X", "https://x.test/oembed", "https://x.test/" + "*" * 100_000)]), "scheme"),
    (json.dumps([provider("X", "https://x.test/oembed", "https://(a+)+$.test/*")]), "scheme"),
    (json.dumps([provider("X", "https://x.test/oembed", "https://[a-z]*.test/*")]), "scheme"),
    (json.dumps([provider("X", "https://x.test/oembed", "https://x.*.test/*")]), "scheme"),
    (json.dumps([provider("X", "https://x.test/oembed", "https:///watch/*")]), "scheme"),
    (json.dumps([provider("X", "https://x.test/oembed", "spotify:*")]), "scheme"),
    (json.dumps([provider("X", "javascript:alert(1)", "https://x.test/*")]), "endpoint"),
    (json.dumps([provider("X", "ftp://x.test/oembed", "https://x.test/*")]), "endpoint"),
    (json.dumps([provider("X", "https://x.test/oembed", *["https://x.test/*"] * 50_001)]), "schemes"),
])
def test_a_hostile_providers_file_is_a_config_error_naming_the_key(tmp_path, data, words):
    with pytest.raises(ConfigError, match="process.oembed_providers") as raised:
        load_with(tmp_path, data)
    assert words in str(raised.value)


def test_an_unreadable_providers_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="process.oembed_providers: cannot read"):
        config.load(None, env={}, overrides={"process.oembed_providers": str(tmp_path / "missing.json")})
    with pytest.raises(ProvidersError, match="cannot read"):
        oembed_providers.read_file(str(tmp_path))       # a directory
    with pytest.raises(ProvidersError, match="over 4,194,304 bytes"):
        oembed_providers.read_file("/dev/zero")          # endless: read no further than the cap


def test_a_good_providers_file_loads(tmp_path):
    settings = load_with(tmp_path, json.dumps([VIDEO]))
    assert settings.process.oembed_providers.endswith("providers.json")


def test_matching_is_linear_in_the_url_and_the_pattern():
    """A pattern of many `*`s against a long text that nearly matches: a backtracking matcher
    takes time to the power of the stars; this one scans once per piece."""
    pieces = oembed_registry._pieces("/" + "a*" * 1000 + "b")
    text = "/" + "a" * 2000
    started = time.perf_counter()
    for _ in range(10):
        assert not glob_match(pieces, text)
    assert time.perf_counter() - started < 1.0
    assert oembed_registry._pieces("/x" + "*" * 100_000 + "y") == ("/x", "y")
    assert glob_match(("/", "b", "d"), "/abcd") and not glob_match(("/", "b", "d"), "/adcb")
    assert glob_match(("/watch",), "/watch") and not glob_match(("/watch",), "/watch2")
