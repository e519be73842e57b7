"""redact_url: a URL's password or token never printed, the rest of the URL kept."""
from __future__ import annotations

import pytest

from spiderduck.core.errors import ConfigError
from spiderduck.core.secrets import read_secret_file, redact_url


@pytest.mark.parametrize("text, expected", [
    ("cassandra://user:hunter2@h1,h2:9042/ks?ssl=true",
     "cassandra://user:<set>@h1,h2:9042/ks?ssl=true"),
    ("nats://s3cr3t-token@nats1:4222", "nats://<set>@nats1:4222"),
    ("tls://user:pw@nats1:4222", "tls://user:<set>@nats1:4222"),
    ("hdfs+https://nn:9871/c?user=U", "hdfs+https://nn:9871/c?user=U"),     # no userinfo
    ("memcacheds://h:11211?ca=/etc/ca.pem", "memcacheds://h:11211?ca=/etc/ca.pem"),
    ("cassandra://user:@h1/ks", "cassandra://user:@h1/ks"),                 # empty: nothing to hide
    ("nats://@h:4222", "nats://@h:4222"),
    ("cassandra://user:<set>@h1/ks", "cassandra://user:<set>@h1/ks"),       # idempotent
    ("write to support@example.com", "write to support@example.com"),       # not a URL
    ("https://example.com/a?from=me@example.com", "https://example.com/a?from=me@example.com"),
])
def test_one_url(text, expected):
    assert redact_url(text) == expected


def test_a_password_with_an_at_sign_is_hidden_whole():
    # urllib reads the userinfo up to the last @ of the authority; so does redact_url.
    assert redact_url("cassandra://u:p@ss@w0rd@h1/ks") == "cassandra://u:<set>@h1/ks"


def test_any_text_every_url():
    message = ("metadata_store 'cassandra://app:pa55:word@10.0.0.1/ks': bad port; "
               "nats_url nats://tok3n@n1:4222,nats://tok3n@n2:4222 unreachable")
    shown = redact_url(message)
    assert "pa55" not in shown and "word" not in shown and "tok3n" not in shown
    assert shown == ("metadata_store 'cassandra://app:<set>@10.0.0.1/ks': bad port; "
                     "nats_url nats://<set>@n1:4222,nats://<set>@n2:4222 unreachable")


def test_repr_quoting_does_not_shield_the_password():
    assert redact_url(repr("cassandra://u:it's@h/ks")) == '"cassandra://u:<set>@h/ks"'


def test_a_secret_file_is_read_without_its_line_end(tmp_path):
    path = tmp_path / "pw"
    path.write_text("correct horse battery\r\n")
    assert read_secret_file("metadata_store", "password_file", str(path)) == "correct horse battery"


@pytest.mark.parametrize("content, reason", [
    (None, "no such file"), ("\n", "the file is empty"), (b"\xff\xfe", "not UTF-8 text"),
    ("dir", "cannot be read")])
def test_a_bad_secret_file_is_named_never_shown(tmp_path, content, reason):
    path = tmp_path / "pw"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ConfigError, match=f"metadata_store: password_file={path}: {reason}"):
        read_secret_file("metadata_store", "password_file", str(path))
