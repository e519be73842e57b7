"""spiderduck.cli.roles.run_roles, which `up` and every role command run: a role that fails stops
the others and its error is raised, and so is one a role raises while stopping."""
from __future__ import annotations

import asyncio

import pytest

from spiderduck.cli.roles import run_roles
from spiderduck.core.settings import Settings

pytestmark = pytest.mark.asyncio
GRACE = 0.2
BOUND = 30.0            # how long a test waits for run_roles at most (it fails past it)


class Roles:
    def __init__(self):
        self.log: list[str] = []

    async def polite(self, settings, stop):
        await stop.wait()
        self.log.append("polite stopped")

    async def failing(self, settings, stop):
        raise RuntimeError("the role failed")

    async def fails_while_stopping(self, settings, stop):
        await stop.wait()
        raise RuntimeError("failed while stopping")


async def test_a_failing_role_stops_the_others_and_its_error_is_raised():
    roles = Roles()
    with pytest.raises(RuntimeError, match="the role failed"):
        await asyncio.wait_for(run_roles(Settings(shutdown_grace=GRACE), [roles.polite, roles.failing],
                                         asyncio.Event()), BOUND)
    assert roles.log == ["polite stopped"]


async def test_an_error_while_stopping_is_raised():
    roles, stop = Roles(), asyncio.Event()
    running = asyncio.create_task(run_roles(Settings(shutdown_grace=GRACE),
                                            [roles.polite, roles.fails_while_stopping], stop))
    await asyncio.sleep(0)
    stop.set()
    with pytest.raises(RuntimeError, match="failed while stopping"):
        await asyncio.wait_for(running, BOUND)
    assert roles.log == ["polite stopped"]
