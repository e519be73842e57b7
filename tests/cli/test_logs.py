"""The config logged at start names every key but no secret: the web UI's admin token and the
passwords in store and NATS URLs are replaced by <set>."""
from __future__ import annotations

import logging

from spiderduck.cli import logs
from spiderduck.core import config


def test_the_logged_config_keeps_no_secret(caplog):
    settings = config.load(env={"SPIDERDUCK_WEB__ADMIN_TOKEN": "t0k-en"}, overrides={
        "metadata_store": "cassandra://sd:s3cret%40x@cass-a,cass-b:9042/ks",
        "nats_url": "nats://crawler:natspw@n1:4222,nats://crawler:natspw@n2:4222"})
    with caplog.at_level(logging.INFO, logger="spiderduck"):
        logs.log_settings(settings, "up")
    [line] = [r.getMessage() for r in caplog.records]
    for secret in ("t0k-en", "s3cret", "natspw"):
        assert secret not in line
    assert '"admin_token": "<set>"' in line
    assert "cassandra://sd:<set>@cass-a,cass-b:9042/ks" in line
    assert "nats://crawler:<set>@n1:4222,nats://crawler:<set>@n2:4222" in line
    assert '"listen": "127.0.0.1:8080"' in line        # the rest as it is


def test_an_unset_token_logs_as_unset(caplog):
    with caplog.at_level(logging.INFO, logger="spiderduck"):
        logs.log_settings(config.load(env={}), "metadata-api")
    assert '"admin_token": ""' in caplog.records[0].getMessage()


def test_beyond_loopback_reads_the_host_of_a_listen_address():
    for listen in ("0.0.0.0:8080", "[::]:8080", ":8080", "10.1.2.3:8080", "example.test:8080"):
        assert logs.beyond_loopback(listen), listen
    for listen in ("", "127.0.0.1:8080", "127.9.9.9:1", "[::1]:8080", "localhost:8080", "LOCALHOST:1"):
        assert not logs.beyond_loopback(listen), listen
