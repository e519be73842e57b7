"""Issue 43, the comparison of two looks at one URL (src/spiderduck/extract/honesty.py): each kind
of difference a cloaking origin makes is found, each legitimate variation is none, and a card
that claims another domain differs even when both looks agree."""
import pytest

from spiderduck.extract.honesty import (CONSISTENT, DIFFERENCES, DIFFERS, TEXT_CHARS, Look, claimed_domain,
                                        compare, normalised_image, normalised_text)

CARD = Look("https://www.news.test/story", chain=("http://news.test/story",), status=200,
            title="City council votes", description="The vote, in full.",
            image="https://img.news.test/card.jpg", claimed_url="https://www.news.test/story",
            site_name="News")


def looked(**changes) -> Look:
    return Look(**{**CARD.__dict__, **changes})


@pytest.mark.parametrize("browser, differences", [
    (looked(final_url="https://phish.test/login", chain=(), claimed_url=""), ("final_domain",)),
    (looked(chain=("https://short.test/a", "https://tracker.test/r")), ("redirects",)),
    (looked(status=404), ("status",)),
    (looked(title="Your account is locked"), ("title",)),
    (looked(description="Verify your password now."), ("description",)),
    (looked(image="https://img.news.test/other.jpg"), ("image",)),
    (looked(final_url="https://scam.test/", chain=("https://www.news.test/story",), title="Win a prize",
            claimed_url=""), ("final_domain", "redirects", "title")),
    # the browser's page still claims the card's domain it is not on
    (looked(final_url="https://phish.test/login", chain=()), ("final_domain", "claimed_domain")),
])
def test_each_difference_a_cloaking_origin_makes_is_found(browser, differences):
    assert compare(CARD, browser) == (DIFFERS, differences)
    assert set(differences) <= set(DIFFERENCES)


@pytest.mark.parametrize("browser", [
    looked(),
    looked(final_url="https://m.news.test/story", chain=("https://www.news.test/story",)),  # mobile, same site
    looked(chain=("https://www.news.test/story", "https://consent.google.com/m?continue="
                  "https://www.news.test/story")),                                       # a consent hop
    looked(title="City Council  votes"),                                                # case, spacing
    looked(title="City council votes", description="The vote, in full."),
    looked(image="http://img.news.test/card.jpg?w=1200&h=630&v=7"),                     # size, cache-busting
    looked(image="https://img.news.test/card-1200x630.jpg"),
    looked(image="https://img.news.test/w_600,h_400/card.jpg"),
])
def test_legitimate_variation_is_consistent(browser):
    assert compare(CARD, browser) == (CONSISTENT, ())


def test_a_rotating_counter_or_a_changing_date_is_no_difference():
    first = looked(title="Live: 12 updates", description="Updated 3 minutes ago")
    assert compare(first, looked(title="Live: 15 updates", description="Updated 9 minutes ago")) == (CONSISTENT, ())
    assert normalised_text("Ｃity\u00a0Council") == normalised_text("city council")


def test_a_card_claiming_another_domain_differs_even_when_both_looks_agree():
    claims = looked(claimed_url="https://www.bank.test/login")
    assert compare(claims, claims) == (DIFFERS, ("claimed_domain",))
    assert claimed_domain(claims) == "bank.test"
    named = looked(site_name="Bank.test")                       # an og:site_name that is a domain
    assert compare(named, named) == (DIFFERS, ("claimed_domain",))
    # a brand claims nothing; a domain it is on is no claim
    for honest in (looked(site_name="Bank of America"), looked(site_name="News.test"),
                   looked(claimed_url="https://m.news.test/story"), looked(claimed_url=""), looked(site_name="")):
        assert compare(honest, honest) == (CONSISTENT, ())


@pytest.mark.parametrize("url", ["", "not a url", "https://[::1/x", "https://" + "a" * 300 + ".test/x.jpg",
                                 "https://img.test/x.jpg?" + "w=1&" * 10_000])
def test_hostile_values_are_compared_without_error(url):
    odd = looked(image=url, final_url=url, claimed_url=url, chain=(url,), site_name=url[:300])
    verdict, _ = compare(odd, odd)
    assert verdict in (CONSISTENT, DIFFERS)
    assert isinstance(normalised_image(url), str)


def test_long_texts_are_compared_in_a_bounded_prefix():
    long = "x" * (TEXT_CHARS * 100)
    assert len(normalised_text(long)) == TEXT_CHARS
    assert compare(looked(title=long + "a"), looked(title=long + "b")) == (CONSISTENT, ())


@pytest.mark.parametrize("claimed_url, site_name", [
    ("http://localhost:3000/post/1", ""), ("http://127.0.0.1:8000/post/1", ""), ("http://[::1]/x", ""),
    ("http://staging/post/1", ""), ("", "Node.js"), ("", "Vue.js"), ("", "Chart.js"), ("", "localhost"),
])
def test_a_development_address_or_a_brand_written_like_a_domain_claims_nothing(claimed_url, site_name):
    look = Look("https://nodejs.org/en/blog/release", claimed_url=claimed_url, site_name=site_name)
    assert claimed_domain(look) == ""
    assert compare(look, look) == (CONSISTENT, ())
