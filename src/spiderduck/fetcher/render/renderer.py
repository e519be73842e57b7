"""Render a page whose static HTML is an empty JavaScript shell (issue 31), bounded.

    async with Renderer(settings.render, fetch, user_agent=ua, accept_language=al) as renderer:
        rendered = await renderer.render(url, body, headers, status)
        if rendered.outcome == "ok": ... rendered.html

At most `max_concurrent` renders run at once (more wait for a place); each is bounded by
`timeout` from the navigation on (every CDP wait; the page's context is disposed after, and a
browser that does not answer then is killed). The browser is started at the first render and again
after `max_pages_per_browser` renders (the old one closed when its last render ends) or when it
died, each time in the jail `render.isolation` asks for (confinement.py, probed on entering: with
`required`, entering raises ConfigError where the platform refuses it). Closing kills every
browser process and removes their profiles.

Outcomes (`Rendered.outcome`, the label of spiderduck_renders_total):
    ok        rendered; `html` is document.documentElement.outerHTML (first MAX_HTML_CHARS)
    timeout   not done within render.timeout (a page that never settles, or loops)
    crash     the page's renderer or the whole browser died during the render
    error     the browser could not be started, or refused the page (a protocol error)
    refused   the renderer is not open (closed, or never entered)
"""
from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Sequence

from spiderduck.core import metrics
from spiderduck.core.config import RenderSettings
from spiderduck.fetcher.render.browser import Browser, BrowserFailed, executable
from spiderduck.fetcher.render.cdp import CdpClosed, CdpError
from spiderduck.fetcher.render.confinement import plan
from spiderduck.fetcher.render.page import Crashed, PageRender, SubFetch

OUTCOMES = ("ok", "timeout", "crash", "error", "refused")
_DEAD_BEFORE = "dead before"      # the browser died before the page started: tried on a new one
SETUP_SECONDS = 10.0        # for a page's context and tab to be ready (not the page's time)
CLOSE_SECONDS = 2.0         # for a page's context to be disposed; past it the browser is killed


@dataclass(frozen=True)
class Rendered:
    outcome: str            # one of OUTCOMES
    html: str = ""          # the rendered document ('' unless ok)
    requests: int = 0       # subresource requests fetched through `fetch` and answered
    blocked: int = 0        # requests failed: by type, method, the cap, or `fetch` refused them
    seconds: float = 0.0    # the whole call, the wait for a place included


def browser_languages(accept_language: str) -> str:
    """An Accept-Language header (fetcher.accept_language, checked at load) as the language list
    the browser is given (CDP's acceptLanguage: its navigator.languages, from which it writes its
    own header): the tags, most wanted first, without q-values, `*` or a tag refused (q=0)."""
    ranked = []
    for order, item in enumerate(accept_language.split(",")):
        tag, _, params = item.partition(";")
        q = params.strip().removeprefix("q=").strip() if params else "1"
        try:
            weight = float(q)
        except ValueError:
            weight = 1.0
        if tag.strip() and tag.strip() != "*" and weight > 0:
            ranked.append((-weight, order, tag.strip()))
    return ",".join(tag for *_, tag in sorted(ranked))


class Renderer:
    def __init__(self, settings: RenderSettings, fetch: SubFetch, *, user_agent: str,
                 accept_language: str = "", clock=time.monotonic):
        self.settings = settings
        self._fetch = fetch
        self._ua = user_agent
        self._languages = browser_languages(accept_language)
        self._clock = clock
        self._places = asyncio.Semaphore(settings.max_concurrent)
        self._starting = asyncio.Lock()
        self._browser: Browser | None = None
        self._browsers: set[Browser] = set()     # every browser not yet closed
        self._open = False
        self._metrics = metrics.recorder(metrics.UNSCOPED)      # spiderduck_renders_total{outcome}

    async def __aenter__(self) -> "Renderer":
        self._chromium = executable(self.settings.chromium)
        self._jail = await plan(self.settings.isolation, self.settings.run_as)  # required: or ConfigError
        self._open = True
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        self._open = False
        browsers, self._browsers, self._browser = list(self._browsers), set(), None
        await asyncio.gather(*(b.close() for b in browsers), return_exceptions=True)

    @property
    def browser_pid(self) -> int | None:
        """The pid (and process group) of the browser the next render uses, if one runs."""
        browser = self._browser
        return browser.pid if browser is not None and browser.alive else None

    async def render(self, url: str, body: bytes, headers: Sequence[tuple[str, str]],
                     status: int = 200) -> Rendered:
        started = self._clock()
        if not self._open:
            return self._done(Rendered("refused"))
        async with self._places:
            if not self._open:
                return self._done(Rendered("refused", seconds=self._clock() - started))
            for attempt in range(2):    # again on a new browser when the last one died idle
                try:
                    browser = await self._take_browser()
                except (BrowserFailed, CdpError, TimeoutError, OSError):
                    return self._done(Rendered("error", seconds=self._clock() - started))
                page = PageRender(browser.cdp, self._fetch, url=url, body=body, headers=headers,
                                  status=status, user_agent=self._ua, accept_language=self._languages,
                                  timeout=self.settings.timeout)
                try:
                    outcome, html = await self._run(page)
                finally:
                    await self._release(browser, page)
                if outcome != _DEAD_BEFORE:
                    break
        outcome = "crash" if outcome == _DEAD_BEFORE else outcome
        return self._done(Rendered(outcome, html, page.requests, page.blocked, self._clock() - started))

    async def _run(self, page: PageRender) -> tuple[str, str]:
        try:
            async with asyncio.timeout(SETUP_SECONDS):
                await page.prepare()
        except (Crashed, CdpClosed):
            return _DEAD_BEFORE, ""     # nothing of the page ran yet: the browser died before
        except TimeoutError:
            return "timeout", ""
        except CdpError:
            return "error", ""
        try:
            async with asyncio.timeout(self.settings.timeout):
                return "ok", await page.load()
        except TimeoutError:
            return "timeout", ""
        except (Crashed, CdpClosed):
            return "crash", ""
        except CdpError:
            return "error", ""

    def _done(self, rendered: Rendered) -> Rendered:
        self._metrics.count("renders", outcome=rendered.outcome)
        return rendered

    # --- the browser ----------------------------------------------------------------------------

    async def _take_browser(self) -> Browser:
        async with self._starting:
            browser = self._browser
            if browser is not None and (not browser.alive
                                        or browser.pages >= self.settings.max_pages_per_browser):
                self._browser = None
                browser.retired = True
                if browser.active == 0 or not browser.alive:
                    await self._close_browser(browser)
                browser = None
            if browser is None:
                browser = await Browser.launch(self._chromium, self.settings.max_memory_mb, self._jail)
                self._browsers.add(browser)
                await self._watch_popups(browser)
                self._browser = browser
            browser.pages += 1
            browser.active += 1
            return browser

    async def _release(self, browser: Browser, page: PageRender) -> None:
        browser.active -= 1
        try:
            await page.close(CLOSE_SECONDS)
            answers = True
        except TimeoutError:
            answers = False         # killed now: a render still on it crashes
        if not answers or not browser.alive:
            browser.retired = True
            if self._browser is browser:
                self._browser = None
        if browser.retired and (browser.active == 0 or not answers or not browser.alive):
            await self._close_browser(browser)

    async def _close_browser(self, browser: Browser) -> None:
        self._browsers.discard(browser)
        await browser.close()

    async def _watch_popups(self, browser: Browser) -> None:
        """Close every page target that is not a render's own page (window.open, target=_blank)
        the moment it appears: one opened by another (openerId), or any page after the first
        of a render's context (each render creates one context and one page in it)."""
        contexts: set[str] = set()      # those holding a page already (a render's own)

        def on_event(method: str, params: dict) -> None:
            info = params.get("targetInfo", {})
            if method != "Target.targetCreated" or info.get("type") != "page":
                return
            context = info.get("browserContextId", "")
            if info.get("openerId") or context in contexts:
                browser.cdp.post("Target.closeTarget", {"targetId": info["targetId"]})
            elif context:
                contexts.add(context)

        browser.cdp.listen("", on_event)
        await browser.cdp.send("Target.setDiscoverTargets", {"discover": True}, timeout=self.settings.timeout)
