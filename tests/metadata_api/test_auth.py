"""The metadata API's tokens file and per-caller ResolveUrl rate, alone (the calls themselves are
tried over real gRPC in tests/e2e/test_tls_service.py)."""
from __future__ import annotations

import os

import pytest

from spiderduck.core.errors import ConfigError
from spiderduck.metadata_api.auth import RELOAD_EVERY, RateLimit, TokenFile, parse_tokens


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_tokens_are_read_by_name():
    tokens = parse_tokens("# who may call\n\nfrontend: tok-a \nbatch:tok:with:colons\n", "f")
    assert tokens == {"frontend": "tok-a", "batch": "tok:with:colons"}


@pytest.mark.parametrize("text, said", [
    ("frontend\n", "line 1: expected name:token"),
    ("frontend:\n", "line 1: expected name:token"),
    (":tok-secret\n", "line 1: expected name:token"),
    ("a:tok-1\na:tok-2\n", "line 2: name 'a' again"),
    ("# nothing\n", "holds no name:token line"),
    ("a:tok-é\n", "line 1: the token of 'a' has characters"),
    ("a:tok-\x01x\n", "line 1: the token of 'a' has characters"),
])
def test_a_bad_tokens_file_is_refused_without_showing_a_token(text, said):
    with pytest.raises(ConfigError, match=said) as refused:
        parse_tokens(text, "tokens")
    assert "tok-" not in str(refused.value)


def test_the_file_is_read_again_when_it_changes(tmp_path):
    path = tmp_path / "tokens"
    path.write_text("frontend:old-token\n")
    clock = Clock()
    tokens = TokenFile(str(path), clock=clock)
    assert tokens.name_of("old-token") == "frontend" and tokens.name_of("new-token") is None
    path.write_text("frontend:new-token\nbatch:b-token\n")
    os.utime(path, (2_000_000_000, 2_000_000_000))
    assert tokens.name_of("new-token") is None          # looked at most every RELOAD_EVERY seconds
    clock.now += RELOAD_EVERY
    assert tokens.name_of("new-token") == "frontend" and tokens.name_of("old-token") is None
    assert tokens.name_of("b-token") == "batch"


def test_a_file_turned_bad_refuses_every_token_until_it_is_good_again(tmp_path, caplog):
    """Fail closed: a malformed file is not the old one's tokens (the real calls, over gRPC, with
    the file emptied, deleted or unreadable: test_token_revocation.py)."""
    path = tmp_path / "tokens"
    path.write_text("frontend:tok-1\n")
    clock = Clock()
    tokens = TokenFile(str(path), clock=clock)
    path.write_text("garbage\n")
    os.utime(path, (2_000_000_000, 2_000_000_000))
    clock.now += RELOAD_EVERY
    assert tokens.name_of("tok-1") is None
    assert "line 1: expected name:token; every token is refused" in caplog.text
    assert "tok-1" not in caplog.text
    path.write_text("frontend:tok-1\n")
    clock.now += RELOAD_EVERY
    assert tokens.name_of("tok-1") == "frontend"


def test_an_unreadable_tokens_file_fails_at_start(tmp_path):
    with pytest.raises(ConfigError, match="metadata_api.tokens_file: cannot read"):
        TokenFile(str(tmp_path / "missing"))


def test_each_caller_has_its_own_rate():
    clock = Clock()
    limit = RateLimit(2.0, clock=clock)                   # 2 a second, bursts of 2
    assert [limit.allow("a") for _ in range(3)] == [True, True, False]
    assert limit.allow("b")                               # another caller is not held back by a
    clock.now += 0.5                                      # one more call earned
    assert [limit.allow("a") for _ in range(2)] == [True, False]


def test_a_slow_rate_allows_one_call_then_waits():
    clock = Clock()
    limit = RateLimit(0.1, clock=clock)                   # bursts of at least one call
    assert limit.allow("a") and not limit.allow("a")
    clock.now += 10
    assert limit.allow("a")
