"""spiderduck.extract.clean_urls' global list (GLOBAL_PARAMS): names whose meaning is the same on every host go
on hosts no site rule names, each with its reason; names that mean tracking on some sites only stay
site rules (NOT_GLOBAL)."""
from __future__ import annotations

import pytest

from spiderduck.extract.clean_urls import GLOBAL_PARAMS, NOT_GLOBAL, clean

UNKNOWN = "https://blog.unknown.test/2026/11/post"


@pytest.mark.parametrize("query, removed", [
    ("igshid=MzRlODBiNWFlZA==", ("igshid",)),
    ("igsh=MWQ1ZGUxMzBkMA%3D%3D", ("igsh",)),
    ("ref_src=twsrc%5Etfw", ("ref_src",)),
    ("gad_source=1&epik=dj0yJnU9&srsltid=AfmBOo", ("gad_source", "epik", "srsltid")),
    ("_kx=abc.def&_branch_match_id=1234", ("_kx", "_branch_match_id")),
    ("pk_campaign=spring&pk_kwd=duck&utm_source_platform=web", ("pk_campaign", "pk_kwd", "utm_source_platform")),
    ("IGSHID=1&Ref%5FSrc=2", ("IGSHID", "Ref%5FSrc")),
])
def test_a_global_name_goes_on_a_host_no_rule_names(query, removed):
    assert clean(f"{UNKNOWN}?id=7&{query}&page=2") == (f"{UNKNOWN}?id=7&page=2", removed)


@pytest.mark.parametrize("name", sorted(NOT_GLOBAL) + ["id", "p", "q", "page", "v", "lang", "pk_id", "utmx", "igshidx"])
def test_a_name_that_selects_content_or_means_something_else_stays(name):
    url = f"{UNKNOWN}?{name}=1"
    assert clean(url) == (url, ())


@pytest.mark.parametrize("url, cleaned, removed", [
    ("https://youtu.be/abc?si=XyZ&t=42", "https://youtu.be/abc?t=42", ("si",)),
    ("https://open.spotify.com/track/4uLU6h?si=a1b2", "https://open.spotify.com/track/4uLU6h", ("si",)),
    ("https://x.com/jack/status/20?s=20&t=AbC&ref_src=twsrc%5Etfw", "https://x.com/jack/status/20",
     ("s", "t", "ref_src")),
    ("https://www.instagram.com/p/Cx1/?igsh=MzRl&img_index=2", "https://www.instagram.com/p/Cx1/?img_index=2",
     ("igsh",)),
])
def test_site_rules_still_apply(url, cleaned, removed):
    assert clean(url) == (cleaned, removed)


def test_where_clearurls_excepts_its_global_rules_the_global_list_is_excepted_too():
    for url in ("https://gitlab.com/o/r?igshid=1", "https://accounts.google.com/signin?ref_src=1&gad_source=2"):
        assert clean(url) == (url, ())


def test_every_global_name_has_its_reason_and_none_is_kept_on_purpose():
    for table in (GLOBAL_PARAMS, NOT_GLOBAL):
        for name, reason in table.items():
            assert name and name == name.lower() and len(reason.split()) >= 3, (name, reason)
    assert not set(GLOBAL_PARAMS) & set(NOT_GLOBAL)
    assert all(name.endswith("_*") or "*" not in name for name in GLOBAL_PARAMS)
    for name in GLOBAL_PARAMS:
        example = name.replace("*", "source")
        assert clean(f"{UNKNOWN}?{example}=1") == (UNKNOWN, (example,)), name
