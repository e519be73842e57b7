"""Headless Chromium rendering of JavaScript shells (issue 31): see renderer.py."""
from spiderduck.fetcher.render.page import MAX_SUBREQUESTS, SubFetch
from spiderduck.fetcher.render.renderer import OUTCOMES, Rendered, Renderer

__all__ = ["MAX_SUBREQUESTS", "OUTCOMES", "Rendered", "Renderer", "SubFetch"]
