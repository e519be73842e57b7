"""free_port with SPIDERDUCK_FREE_PORTS (what each test worker is given: tests/conftest.py): ports
of that range only, never the same twice until the range wraps, a port in use skipped."""
from __future__ import annotations

import socket

import pytest

from spiderduck.cli import nats_server
from spiderduck.cli.nats_server import FREE_PORTS_ENV, free_port


@pytest.fixture
def a_range(monkeypatch):
    with socket.socket() as s:          # a range of 20 ports around one free now
        s.bind(("127.0.0.1", 0))
        base = min(s.getsockname()[1], 65000)
    monkeypatch.setenv(FREE_PORTS_ENV, f"{base}-{base + 19}")
    monkeypatch.setattr(nats_server, "_next_in_range", {})
    return base, base + 19


def test_ports_come_from_the_range_each_once_until_it_wraps(a_range):
    low, high = a_range
    ports = [free_port() for _ in range(10)]
    assert all(low <= p <= high for p in ports)
    assert len(set(ports)) == 10


def test_a_port_in_use_is_skipped(a_range):
    first = free_port()
    with socket.socket() as held:
        held.bind(("127.0.0.1", first + 1 if first < a_range[1] else a_range[0]))
        held.listen()
        taken = held.getsockname()[1]
        assert taken not in {free_port() for _ in range(19)}


@pytest.mark.parametrize("text", ["", "nonsense", "80-90", "3000", "9000-8000", "60000-70000"])
def test_no_range_or_a_wrong_one_is_the_kernels_choice(monkeypatch, text):
    assert nats_server._port_range(text) is None
    monkeypatch.setenv(FREE_PORTS_ENV, text)
    with socket.socket() as s:
        s.bind(("127.0.0.1", free_port()))     # a port that binds
