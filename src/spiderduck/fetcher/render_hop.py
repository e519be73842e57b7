"""A page hop rendered in the headless browser (issue 31): when, and the requests it makes.

    Fetcher.fetch(url, render=True) -> static answer -> shell? -> Renderer.render -> FetchResult.rendered

Only a page asked for with `render` (the scheduler asks when its render.enabled is set), on a
fetcher with a renderer (its render.enabled), is looked at; it is rendered when its static
answer is a 200 HTML page, read whole, that spiderduck.extract.shell says is an empty shell.
The browser is given the static answer for the page itself (it is never fetched twice), and
every other request it makes is one `subresource` GET through this fetcher's HttpClient: the
address guard on every address and every redirect (a 3xx is handed back as it is, and the
browser's next request is intercepted again), the body cap, and, on a domain this fetcher owns
(the page's, above all), a turn on its politeness slot. robots.txt is the page's, decided before its static
fetch. The rendered DOM is FetchResult.rendered and the renderer's outcome `render_outcome`.
"""
from __future__ import annotations


from spiderduck.core.fetch import HTML_TYPES, FetchResult, declared_type
from spiderduck.core.status import Status
from spiderduck.extract import shell
from spiderduck.core.frozen import evolve

SUBRESOURCE_ACCEPT = "*/*"


def wants_render(result: FetchResult) -> bool:
    """Whether a page's static answer is worth rendering: a whole 200 HTML page that is a shell."""
    if result.status is not Status.OK or result.http_status != 200 or result.truncated:
        return False
    if declared_type(result.header("content-type")) not in HTML_TYPES:
        return False
    return shell.needs_render(shell.signals(result.body))


async def rendered(renderer, result: FetchResult) -> FetchResult:
    """`result` with the page's DOM after rendering, and the renderer's outcome."""
    done = await renderer.render(result.url, result.body, result.headers, result.http_status)
    html = done.html.encode("utf-8", "replace") if done.outcome == "ok" else b""
    return evolve(result, rendered=html, render_outcome=done.outcome)
