"""A clock tests move by hand: `clock()` reads it, `await clock.sleep(s)` advances it."""
from __future__ import annotations

import asyncio


class FakeClock:
    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)
