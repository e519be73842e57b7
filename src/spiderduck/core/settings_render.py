"""The `render` section of the settings (src/spiderduck/core/settings.py re-exports it): the
headless browser that renders a page whose static HTML is an empty shell."""
from __future__ import annotations

import math
from dataclasses import dataclass

from spiderduck.core.errors import ConfigError
from spiderduck.core.settings_duration import Duration


@dataclass(frozen=True)
class RenderSettings:
    enabled: bool = False             # render a page whose static HTML is an empty shell
                                      # (src/spiderduck/extract/shell.py) in headless Chromium, every request
                                      # it makes through the fetcher's guard, robots.txt and politeness
    max_concurrent: int = 2           # pages rendered at once per fetcher; more wait for a place
    timeout: Duration = 10.0          # seconds one page's render may take; past it the page is TIMEOUT
                                      # with what its static HTML gave
    chromium: str = ""                # the browser executable; empty = `chromium` on PATH
    max_pages_per_browser: int = 100  # pages a browser renders before it is restarted (its memory
                                      # returned); a crash restarts it too
    max_memory_mb: int = 512          # JavaScript heap of a page's renderer (V8's max-old-space-size);
                                      # a page past it crashes its tab, not the fetcher
    subresource_rate: float = 2.0     # requests per second per domain a rendered page may make to a
                                      # domain another fetcher owns (an owned one takes its slot's turn)
    isolation: str = "auto"           # the browser in a network namespace of its own (nothing to reach:
                                      # its requests come over CDP), as a user other than root, with
                                      # Chromium's sandbox on (src/spiderduck/fetcher/render/confinement.py):
                                      # auto = each where the platform allows it, a WARNING once for what
                                      # it refuses; required = all three or the fetcher does not start;
                                      # off = none (the fetcher's network and user, --no-sandbox)
    run_as: str = "nobody"            # the user the browser runs as when the fetcher runs as root
                                      # (Chromium runs no sandbox as root); ignored otherwise

    def __post_init__(self):
        if not 1 <= self.max_concurrent <= MAX_RENDERS:
            raise ConfigError(f"render.max_concurrent: {self.max_concurrent} is not 1 to {MAX_RENDERS}")
        if self.timeout <= 0:
            raise ConfigError(f"render.timeout: {self.timeout:g}s must be positive")
        if self.max_pages_per_browser < 1:
            raise ConfigError(f"render.max_pages_per_browser: {self.max_pages_per_browser} must be at least 1")
        if not 64 <= self.max_memory_mb <= 16_384:
            raise ConfigError(f"render.max_memory_mb: {self.max_memory_mb} is not 64 to 16384")
        if not (self.subresource_rate > 0 and math.isfinite(self.subresource_rate)):
            raise ConfigError(f"render.subresource_rate: {self.subresource_rate:g} must be a positive number")
        if self.isolation not in ISOLATION_MODES:
            raise ConfigError(f"render.isolation: {self.isolation!r} is not one of {', '.join(ISOLATION_MODES)}")
        if not self.run_as:
            raise ConfigError("render.run_as: empty (name the user the browser runs as under root)")


MAX_RENDERS = 64
ISOLATION_MODES = ("auto", "required", "off")     # render.isolation
