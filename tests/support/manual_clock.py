"""A clock only the test moves, shared by tasks that both read the time and sleep on it.

`clock()` reads it; `await clock.sleep(s)` returns once the test has advanced it by `s`;
`clock.advance(s)` moves it and wakes the sleepers now due. Unlike FakeClock (support.clock),
whose sleep moves time itself, time stands still while the tasks work (real I/O included),
and `asleep()` tells how many have gone back to sleep, so a test can advance a step, wait
for every task to be done with it, look, and advance again.
"""
from __future__ import annotations

import asyncio


class ManualClock:
    def __init__(self, now: float = 100.0):
        self.now = now
        self._sleepers: dict[asyncio.Future, float] = {}      # wake-up -> when it is due

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        wake = asyncio.get_running_loop().create_future()
        self._sleepers[wake] = self.now + seconds
        try:
            await wake
        finally:
            del self._sleepers[wake]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for wake, due in self._sleepers.items():
            if due <= self.now and not wake.done():
                wake.set_result(None)

    def dues(self) -> list[float]:
        """When the sleepers not yet woken are due, earliest first."""
        return sorted(due for wake, due in self._sleepers.items() if not wake.done())

    def asleep(self) -> int:
        """Tasks sleeping on this clock and not yet woken."""
        return sum(1 for wake in self._sleepers if not wake.done())
