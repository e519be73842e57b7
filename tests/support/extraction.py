"""extract_page's two settings as a role started with no config file passes them: process.parser
and the robots token of fetcher.user_agent. The extraction library has no defaults of its own
(issue 37: its callers pass their settings' values); a test that is not about a setting passes
these."""
from __future__ import annotations

from spiderduck.core.config import Settings
from spiderduck.extract.signals import robots_token

_DEFAULTS = Settings()
PARSER = _DEFAULTS.process.parser
ROBOTS_TOKEN = robots_token(_DEFAULTS.fetcher.user_agent)
EXTRACTION = {"parser": PARSER, "robots_token": ROBOTS_TOKEN}   # extract_page(..., **EXTRACTION)
