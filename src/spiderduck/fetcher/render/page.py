"""One page rendered in a browser context of its own, every request it makes answered by us.

The page's own URL is answered with the static response the fetcher already has (never fetched
again). Every other http(s) request pauses in the Fetch domain and is either failed
(BlockedByClient: a resource type a preview never needs, a method other than GET, past
MAX_SUBREQUESTS, a scheme other than http(s)) or
fetched through `fetch` (the fetcher's guard and politeness) and fulfilled with what it answered:
`Fetch.continueRequest` is never used for http(s), so the browser itself connects nowhere (and
its proxy does not exist: whatever escapes interception fails). A 3xx is fulfilled as it is:
the browser's request for its Location pauses here again. The page navigating itself away (a
script's redirect, a download) is answered 204 No Content, so the page stays (counted blocked).

Children of the page (out-of-process frames, workers) are attached paused and intercepted the
same way; a page target it opens (window.open) is closed at once (see Renderer); dialogs are
dismissed; downloads denied. WebRTC is off in the browser (browser.flags); in every frame the
page and its children load, NO_WEBRTC removes WebRTC's constructors before any script of the page
runs (defence in depth)."""
from __future__ import annotations

import asyncio
import base64
import time
from typing import Awaitable, Callable, Sequence

from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.fetch import FetchResult
from spiderduck.core.status import Status
from spiderduck.fetcher.render.cdp import CdpConnection, CdpError

SubFetch = Callable[[str], Awaitable[FetchResult]]

MAX_SUBREQUESTS = 64            # requests fetched for one page; more are failed
QUIET_SECONDS = 0.5             # after the load event, this long with no request pending ends it
MAX_HTML_CHARS = 4 * 1024 * 1024    # of document.documentElement.outerHTML kept (the rest cut)
STEP_SECONDS = 0.05             # how often the quiet wait looks

# Resource types never fetched: what a preview does not read (media, fonts), and what only
# reports or streams (beacons, CSP reports, prefetches, event streams), and "Other" (favicons).
BLOCKED_TYPES = frozenset({"Image", "Media", "Font", "TextTrack", "Ping", "CSPViolationReport",
                           "Manifest", "Prefetch", "SignedExchange", "EventSource", "Other"})
# Response headers that describe the bytes on the wire, not the (decoded, maybe cut) body we hand over.
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection",
                           "keep-alive", "trailer", "upgrade"})
# What answers a navigation of the page away from its URL: a 204 leaves the page where it is (a
# failed navigation would replace it with the browser's error page).
_STAY = {"responseCode": 204, "responseHeaders": [], "body": ""}
# Run in every frame before the page's scripts: no RTCPeerConnection (no ICE, no STUN, no mDNS).
NO_WEBRTC = "(() => { for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', " \
            "'RTCIceTransport', 'RTCDataChannel']) { try { delete globalThis[name]; } catch (e) {} } })();"
_HTML = "(() => { const e = document.documentElement; " \
        f"return e ? e.outerHTML.slice(0, {MAX_HTML_CHARS}) : ''; }})()"


class Crashed(SpiderDuckError):
    """The page's renderer (or the whole browser) died during the render. Not retryable: the
    page may crash it again (the renderer tries a new browser itself when none of it ran)."""


def _same_document(a: str, b: str) -> bool:
    return a.split("#", 1)[0] == b.split("#", 1)[0]


def response_headers(headers: Sequence[tuple[str, str]]) -> list[dict]:
    return [{"name": k, "value": v} for k, v in headers if k.lower() not in _WIRE_HEADERS]


class PageRender:
    """Render `url` (answered with `body`, `headers`, `status`) once: `run` gives the HTML."""

    def __init__(self, cdp: CdpConnection, fetch: SubFetch, *, url: str, body: bytes,
                 headers: Sequence[tuple[str, str]], status: int, user_agent: str, timeout: float,
                 accept_language: str = ""):
        self.cdp, self._fetch, self.url = cdp, fetch, url
        self._document = {"responseCode": status, "responseHeaders": response_headers(headers),
                          "body": base64.b64encode(body).decode()}
        self._timeout = timeout
        self._override = {"userAgent": user_agent}
        if accept_language:
            self._override["acceptLanguage"] = accept_language
        self.context = ""
        self.target = ""
        self.requests = 0           # fetched through `fetch` and fulfilled
        self.blocked = 0            # failed: refused here, or `fetch` gave no answer
        self._fetches = 0
        self._pending = 0
        self._last_change = time.monotonic()
        self._sessions: list[str] = []
        self._tasks: set[asyncio.Task] = set()
        loop = asyncio.get_running_loop()
        self._loaded = loop.create_future()
        self._crashed = loop.create_future()

    async def prepare(self) -> None:
        """A context, a blank page in it, attached and intercepting. The caller bounds it."""
        self.context = (await self._send("Target.createBrowserContext", {"disposeOnDetach": True}))[
            "browserContextId"]
        await self._send("Browser.setDownloadBehavior",
                         {"behavior": "deny", "browserContextId": self.context})
        self.target = (await self._send("Target.createTarget", {
            "url": "about:blank", "browserContextId": self.context}))["targetId"]
        session = (await self._send("Target.attachToTarget",
                                    {"targetId": self.target, "flatten": True}))["sessionId"]
        await self._intercept(session, frame=True)
        await self._send("Page.enable", session=session)
        # fetcher.accept_language as the page's navigator.language(s) and its requests' header
        await self._send("Network.setUserAgentOverride", self._override, session=session)

    async def load(self) -> str:
        """Navigate, wait for the load event and then for no request pending for QUIET_SECONDS:
        the rendered HTML. TimeoutError (the caller bounds it), Crashed, CdpError."""
        session = self._sessions[0]
        navigated = await self._until(self._send("Page.navigate", {"url": self.url}, session=session))
        if navigated.get("errorText"):
            raise CdpError(f"navigation failed: {navigated['errorText']}")
        await self._until(asyncio.shield(self._loaded))
        await self._until(self._quiet())
        evaluated = await self._until(self._send("Runtime.evaluate", {
            "expression": _HTML, "returnByValue": True}, session=session))
        value = evaluated.get("result", {}).get("value")
        if not isinstance(value, str):
            raise CdpError(f"outerHTML gave {evaluated.get('exceptionDetails') or evaluated!r:.200}")
        return value

    async def close(self, timeout: float) -> None:
        """Dispose of the context (its pages, popups and workers). TimeoutError: the browser does
        not answer."""
        for task in self._tasks:
            task.cancel()
        for session in self._sessions:
            self.cdp.forget(session)
        if self.context and not self.cdp.closed:
            try:
                await self.cdp.send("Target.disposeBrowserContext",
                                    {"browserContextId": self.context}, timeout=timeout)
            except CdpError:
                pass

    # --- the steps --------------------------------------------------------------------------

    async def _send(self, method: str, params: dict | None = None, *, session: str = "") -> dict:
        return await self.cdp.send(method, params, session=session, timeout=self._timeout)

    async def _until(self, awaitable):
        """`awaitable`'s value, or Crashed as soon as the page (or the browser) dies."""
        step = asyncio.ensure_future(awaitable)
        try:
            await asyncio.wait([step, self._crashed], return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not step.done():
                step.cancel()
        if not step.done() or step.cancelled():
            await asyncio.gather(step, return_exceptions=True)
            raise Crashed("the page crashed")
        if self._crashed.done() and step.exception() is not None:
            raise Crashed("the page crashed") from step.exception()
        return step.result()

    async def _quiet(self) -> None:
        while self._pending or time.monotonic() - self._last_change < QUIET_SECONDS:
            await asyncio.sleep(STEP_SECONDS)

    async def _intercept(self, session: str, *, frame: bool) -> None:
        """Listen on `session` and pause every request it makes; its children attach paused. A
        frame's documents get NO_WEBRTC before their own scripts."""
        self._sessions.append(session)
        if frame:
            await self._send("Page.addScriptToEvaluateOnNewDocument",
                             {"source": NO_WEBRTC, "runImmediately": True}, session=session)
        self.cdp.listen(session, lambda method, params: self._on_event(session, method, params))
        await self._send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]},
                         session=session)
        try:
            await self._send("Network.setBypassServiceWorker", {"bypass": True}, session=session)
        except CdpError:
            pass        # a target without the Network domain (a worker)
        await self._send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True,
                                                  "flatten": True}, session=session)

    # --- events -----------------------------------------------------------------------------

    def _on_event(self, session: str, method: str, params: dict) -> None:
        if method == "Fetch.requestPaused":
            self._pending += 1
            self._last_change = time.monotonic()
            self._spawn(self._answer(session, params))
        elif method == "Page.loadEventFired":
            _settle(self._loaded, True)
        elif method == "Page.javascriptDialogOpening":
            self.cdp.post("Page.handleJavaScriptDialog", {"accept": False}, session=session)
        elif method in ("Inspector.targetCrashed", "") or (
                method == "Inspector.detached" and session == self._sessions[0]):
            _settle(self._crashed, True)
        elif method == "Target.attachedToTarget":
            self._spawn(self._child(params))

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _child(self, params: dict) -> None:
        child, info = params["sessionId"], params.get("targetInfo", {})
        try:
            if info.get("type") == "page":      # opened by the page: never runs
                await self._send("Target.closeTarget", {"targetId": info.get("targetId", "")})
                return
            await self._intercept(child, frame=info.get("type") == "iframe")
            await self._send("Runtime.runIfWaitingForDebugger", session=child)
        except (CdpError, TimeoutError):
            pass

    async def _answer(self, session: str, params: dict) -> None:
        try:
            rid = params["requestId"]
            verdict = await self._verdict(params)
            if verdict is None:
                self.blocked += 1
                await self._send("Fetch.failRequest", {"requestId": rid, "errorReason": "BlockedByClient"},
                                 session=session)
            elif verdict == "continue":
                await self._send("Fetch.continueRequest", {"requestId": rid}, session=session)
            else:
                await self._send("Fetch.fulfillRequest", {"requestId": rid, **verdict}, session=session)
        except (CdpError, TimeoutError):
            pass        # the request (or its page) went away meanwhile
        finally:
            self._pending -= 1
            self._last_change = time.monotonic()

    async def _verdict(self, params: dict) -> dict | str | None:
        """What answers one paused request: a fulfillRequest's fields, "continue", None: fail."""
        request, kind = params.get("request", {}), params.get("resourceType", "")
        url = request.get("url", "") + request.get("urlFragment", "")
        if url.startswith(("data:", "blob:")):
            return "continue"
        document = kind == "Document" and params.get("frameId") == self.target
        if document and _same_document(url, self.url):
            return self._document
        if document:                # the page leaving itself (a script's redirect, a download)
            self.blocked += 1
            return _STAY
        if kind in BLOCKED_TYPES or request.get("method") != "GET" \
                or not url.startswith(("http://", "https://")) or self._fetches >= MAX_SUBREQUESTS:
            return None
        self._fetches += 1
        result = await self._fetch(url)
        if result.status != Status.OK or not 100 <= result.http_status <= 599:
            return None
        self.requests += 1
        return {"responseCode": result.http_status, "responseHeaders": response_headers(result.headers),
                "body": base64.b64encode(result.body).decode()}


def _settle(future: asyncio.Future, value) -> None:
    if not future.done():
        future.set_result(value)
