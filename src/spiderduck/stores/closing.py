"""What every store shares: `close()` (nothing to do by default) and `async with`, which closes."""
from __future__ import annotations


class Closing:
    async def close(self) -> None:
        pass

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()
