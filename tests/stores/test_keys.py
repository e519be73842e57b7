"""spiderduck.stores.keys: the key a URL is looked up under."""
from __future__ import annotations

from spiderduck.core import urls
from spiderduck.stores.keys import lookup_key


def test_a_url_that_parses_is_asked_for_in_its_canonical_form():
    url = "HTTP://Example.COM/a?b=1"
    assert lookup_key(url) == urls.canonicalize(url)


def test_a_url_that_does_not_parse_is_asked_for_as_given_trimmed():
    assert lookup_key("  not a url  ") == "not a url"
