"""spiderduck.core.user_agent: the product token our crawler is named by."""
from __future__ import annotations

import pytest

from spiderduck.core.user_agent import product_token


@pytest.mark.parametrize("user_agent, token", [
    ("SpiderDuck/0.1.0 (+https://example.org/spiderduck)", "spiderduck"),
    ("FooBot", "foobot"),
    ("FooBot/1.0 extra", "foobot"),
    ("Foo Bar", None),
    ("", None),
])
def test_product_token(user_agent, token):
    assert product_token(user_agent) == token
