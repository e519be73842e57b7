"""`up`'s embedded nats-server never takes another program's NATS for its own: a server already
on the port it was given (as a foreign NATS on 4222 may be) makes its start fail rather than
hand that server's address to the roles, and `up` then starts its own on a free port."""
from __future__ import annotations

import pytest

from spiderduck.cli import roles
from spiderduck.cli.nats_server import EmbeddedNats, free_port
from spiderduck.core.errors import ConfigError


@pytest.fixture
def foreign(tmp_path):
    """A nats-server of another program (another name) on a free port."""
    with EmbeddedNats(str(tmp_path / "theirs")) as server:
        yield server


def test_a_server_already_on_the_port_is_not_taken_for_ours(tmp_path, foreign):
    ours = EmbeddedNats(str(tmp_path / "ours"), port=foreign.port)
    with pytest.raises(ConfigError, match="another program"):
        ours.start(timeout=10)
    ours.stop()
    assert foreign.proc.poll() is None                  # theirs untouched


def test_up_moves_to_a_free_port_when_the_usual_one_is_taken_as_it_starts(tmp_path, foreign, monkeypatch):
    """The race two `up`s (or up and another NATS) run: the usual port looked free, then was not."""
    monkeypatch.setattr(roles, "NATS_PORT", foreign.port)
    monkeypatch.setattr(roles, "port_open", lambda host, port: False)
    server = roles._started_nats(str(tmp_path / "ours"), {role: "pw-" + role for role in roles.permissions.ROLES})
    try:
        assert server.port != foreign.port and server.proc.poll() is None
        assert server._listening()
    finally:
        server.stop()


def test_a_free_port_is_used_as_given(tmp_path):
    port = free_port()
    with EmbeddedNats(str(tmp_path / "ours"), port=port) as server:
        assert server.port == port and server._listening()
