"""The mark of a duration in the settings' declarations (src/spiderduck/core/settings.py re-exports
it): here, not with the parsing in src/spiderduck/core/config.py, so that every module declaring a
section resolves its hints to the same Duration."""
from __future__ import annotations

from typing import Annotated

DURATION = "duration"   # the mark of a duration field (see Duration)
Duration = Annotated[float, DURATION]   # seconds; read from a number or 7d, 12h, 30m, 45s, 250ms
