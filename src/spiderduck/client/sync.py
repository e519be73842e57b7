"""Client: the blocking client, an AsyncClient on an event loop of its own in a thread."""
from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Iterator
from typing import Any, TypeVar

from spiderduck.client.aio import AsyncClient, _url_list
from spiderduck.client.errors import Error
from spiderduck.client.events import EventStream
from spiderduck.client.names import CLOSE_CALLS_TIMEOUT, DEFAULT_METADATA
from spiderduck.client.results import Lookup, Resolution
from spiderduck.v1 import metadata_pb2
from spiderduck.v1.events_pb2 import UrlProcessed


T = TypeVar("T")


# --- the synchronous client -----------------------------------------------------------------------

class Client:
    """SpiderDuck's client for plain (synchronous) code: `get`, `resolve`, `submit` and
    `events` as AsyncClient's, blocking until done. See the module's documentation.

    It takes AsyncClient's arguments, and runs one on an event loop of its own in a background
    (daemon) thread, so it works from scripts, from threads, and even beside a running event
    loop. Methods may be called from several threads at once. `close()` (or leaving a `with`
    block) stops the thread; calls still running in other threads are cancelled, and raise
    Error. `on_progress` callbacks run on that thread.
    """

    def __init__(self, metadata: str = DEFAULT_METADATA, nats_url: str | None = None,
                 **options: Any):
        self._client = AsyncClient(metadata, nats_url, **options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="spiderduck-client",
                                        daemon=True)
        self._thread.start()
        self._lock = threading.Lock()
        self._closed = False
        self._calls: set[asyncio.Task[Any]] = set()                 # running, on the loop
        self._reads: set[asyncio.Task[Any]] = set()                 # of them, events' next
        self._waiting: set[concurrent.futures.Future[Any]] = set()  # awaited by callers
        # Forgotten without close(): its thread stops when it is collected (or at exit).
        self._finalizer = weakref.finalize(self, _stop_loop, self._loop)

    @property
    def metadata(self) -> str:
        return self._client.metadata

    @property
    def nats_url(self) -> str | None:
        return self._client.nats_url

    def _run(self, step: Awaitable[T], *, reading: bool = False) -> T:
        """Run `step` on the client's loop and wait for its result here; Error("this SpiderDuck
        client is closed") if the client is closed, before or meanwhile (close() cancels it).
        `reading`: an event stream's next, which the streams' end ends (close() lets it)."""
        coro = step if isinstance(step, Coroutine) else _awaited(step)
        if threading.current_thread() is self._thread:
            coro.close()
            raise Error("a Client's method cannot be called from its own callbacks")
        with self._lock:              # close() sees every call started before it
            if self._closed:
                coro.close()
                raise Error("this SpiderDuck client is closed")
            future = asyncio.run_coroutine_threadsafe(self._tracked(coro, reading), self._loop)
            self._waiting.add(future)
        try:
            return future.result()
        except (concurrent.futures.CancelledError, asyncio.CancelledError):
            if self._closed:
                raise Error("this SpiderDuck client is closed") from None
            raise
        except BaseException:
            future.cancel()           # interrupted (Ctrl-C): the call stops too
            raise
        finally:
            with self._lock:
                self._waiting.discard(future)

    async def _tracked(self, coro: Coroutine[Any, Any, T], reading: bool = False) -> T:
        """`coro`, known to close() while it runs (to cancel it)."""
        task = asyncio.current_task()
        assert task is not None
        self._calls.add(task)
        if reading:
            self._reads.add(task)
        try:
            return await coro
        finally:
            self._calls.discard(task)
            self._reads.discard(task)

    async def _close(self) -> None:
        """On the loop: end the event streams (their readers stop iterating), cancel the calls
        still running and let them finish, then close the connections."""
        for stream in list(self._client._streams):
            await stream.close()
        if self._reads:               # their readers see the end (StopIteration), not Error
            await asyncio.wait(list(self._reads), timeout=1.0)
        # Cancelled again until done: a cancellation can be lost in a library (Python 3.11's
        # wait_for, as nats-py's connect uses it, swallows one that comes as it finishes).
        pending = set(self._calls)
        deadline = asyncio.get_running_loop().time() + CLOSE_CALLS_TIMEOUT
        while pending and (left := deadline - asyncio.get_running_loop().time()) > 0:
            for task in pending:
                task.cancel()
            _, pending = await asyncio.wait(pending, timeout=min(0.1, left))
        await self._client.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections and stop the background thread. Idempotent.

        Calls running in other threads meanwhile are cancelled: they raise Error("this
        SpiderDuck client is closed"), and iterating `events()` ends (StopIteration)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            with contextlib.suppress(concurrent.futures.TimeoutError):
                asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=30)
        finally:
            with self._lock:          # any call still awaited (it ignored its cancellation)
                waiting = list(self._waiting)
            for future in waiting:
                future.cancel()
            self._finalizer.detach()
            _stop_loop(self._loop)
            self._thread.join(timeout=30)
            if not self._thread.is_alive():
                self._loop.close()

    def get(self, urls: Iterable[str]) -> list[Lookup]:
        """The stored record of each URL; see AsyncClient.get."""
        return self._run(self._client.get(list(_url_list(urls, "get"))))

    def lookups(self, urls: Iterable[str]) -> Iterator[Lookup]:
        """`get`, one Lookup at a time, as each call is answered; see AsyncClient.lookups."""
        stream = self._client.lookups(urls)
        try:
            while True:
                try:
                    yield self._run(stream.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            if not self._closed:
                self._run(stream.aclose())

    def resolve(self, url: str, timeout: float | None = None, *, refresh: bool = False,
                max_age: float | None = None) -> Resolution:
        """The URL's record, crawled first if need be; see AsyncClient.resolve."""
        return self._run(self._client.resolve(url, timeout, refresh=refresh, max_age=max_age))

    def explain(self, url: str, timeout: float | None = None) -> metadata_pb2.Explanation:
        """Why the URL's preview looks as it does; see AsyncClient.explain."""
        return self._run(self._client.explain(url, timeout))

    def submit(self, urls: Iterable[str] = (), *, tweets: Iterable[str] = (),
               refresh: bool = False, source: str | None = None, submission_id: str = "",
               on_progress: Callable[[int], object] | None = None) -> int:
        """Publish URLs (and tweets) to be resolved; see AsyncClient.submit."""
        return self._run(self._client.submit(
            list(_url_list(urls, "submit")), tweets=list(_url_list(tweets, "submit")),
            refresh=refresh, source=source, submission_id=submission_id, on_progress=on_progress))

    def events(self) -> EventIterator:
        """The UrlProcessed events published from now on, as an iterator; see
        AsyncClient.events. Use it as a context manager to subscribe before submitting."""
        return EventIterator(self, self._client.events())


async def _awaited(step: Awaitable[T]) -> T:
    return await step


def _stop_loop(loop: asyncio.AbstractEventLoop) -> None:
    if not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)


class EventIterator:
    """UrlProcessed events as they are published; from `Client.events()`.

        with client.events() as events:       # subscribed
            client.submit([url])
            event = events.next(timeout=30)   # or: for event in events: ...
    """

    def __init__(self, client: Client, stream: EventStream):
        self._client = client
        self._stream = stream

    @property
    def dropped(self) -> int:
        """Events dropped because too many awaited reading; see EventStream."""
        return self._stream.dropped

    def subscribe(self) -> None:
        """Subscribe now (once): events published after this returns are all delivered."""
        self._client._run(self._stream.subscribe())

    def close(self) -> None:
        """Unsubscribe; iteration ends."""
        if not self._client._closed:
            self._client._run(self._stream.close())

    def __enter__(self) -> EventIterator:
        self.subscribe()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[UrlProcessed]:
        return self

    def __next__(self) -> UrlProcessed:
        try:
            return self._client._run(self._stream.__anext__(), reading=True)
        except StopAsyncIteration:
            raise StopIteration from None

    def next(self, timeout: float | None = None) -> UrlProcessed:
        """The next event; TimeoutError when none came within `timeout` seconds (an event that
        comes later is kept for the next call), StopIteration once closed."""
        async def within() -> UrlProcessed:
            return await asyncio.wait_for(self._stream.__anext__(), timeout)
        try:
            return self._client._run(within(), reading=True)
        except StopAsyncIteration:
            raise StopIteration from None
