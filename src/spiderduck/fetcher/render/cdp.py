"""A minimal Chrome DevTools Protocol client over the browser's pipe (`--remote-debugging-pipe`).

The browser reads commands on its fd 3 and writes answers and events on its fd 4, each message a
JSON text ended by a NUL byte: no DevTools port exists for another process to reach. Commands are
matched to their answers by id; events go to the listener registered for their session (flattened
sessions: `sessionId` on each message; "" is the browser's own). Every wait is bounded by the
caller's timeout; when the pipe closes (the browser exited or crashed) or sends a message past
MAX_MESSAGE_BYTES, every command waiting fails with `CdpClosed`, and so does every command sent
afterwards."""
from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Callable

from spiderduck.core.errors import SpiderDuckError

Listener = Callable[[str, dict], None]      # (method, params), called in the reader task

MAX_MESSAGE_BYTES = 64 * 1024 * 1024        # an answer larger (a huge outerHTML) closes the pipe


class CdpError(SpiderDuckError):
    """The browser answered a command with an error."""


class CdpClosed(CdpError):
    """The pipe closed: the browser is gone (or was closed)."""
    retryable = True


class CdpConnection:
    def __init__(self, reader: asyncio.StreamReader, read_transport: asyncio.BaseTransport,
                 writer: asyncio.StreamWriter):
        self._pipe_in, self._read_transport = reader, read_transport
        self._pipe_out = writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._listeners: dict[str, Listener] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def over_pipe(cls, to_browser: int, from_browser: int) -> "CdpConnection":
        """The connection over our ends of the browser's pipes (their fds are taken over)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES, loop=loop)
        incoming = open(from_browser, "rb", buffering=0, closefd=True)
        outgoing = open(to_browser, "wb", buffering=0, closefd=True)
        try:
            read_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader, loop=loop), incoming)
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, outgoing)
        except BaseException:
            incoming.close()
            outgoing.close()
            raise
        return cls(reader, read_transport, asyncio.StreamWriter(transport, protocol, None, loop))

    @property
    def closed(self) -> bool:
        return self._reader.done()

    def listen(self, session_id: str, listener: Listener) -> None:
        self._listeners[session_id] = listener

    def forget(self, session_id: str) -> None:
        self._listeners.pop(session_id, None)

    async def send(self, method: str, params: dict | None = None, *, session: str = "",
                   timeout: float) -> dict:
        """The command's result; CdpError when the browser refuses it, CdpClosed when the
        connection is gone, TimeoutError past `timeout` seconds."""
        if self.closed:
            raise CdpClosed(f"{method}: the browser connection is closed")
        ident = next(self._ids)
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        answer = asyncio.get_running_loop().create_future()
        self._waiting[ident] = answer
        try:
            async with asyncio.timeout(timeout):
                self._pipe_out.write(json.dumps(message).encode() + b"\0")
                await self._pipe_out.drain()
                return await answer
        except (ConnectionError, RuntimeError) as exc:
            raise CdpClosed(f"{method}: {exc}") from exc
        finally:
            self._waiting.pop(ident, None)

    def post(self, method: str, params: dict | None = None, *, session: str = "") -> None:
        """Send a command without waiting for its answer (a reply to an event)."""
        if not self.closed:
            task = asyncio.get_running_loop().create_task(
                self._quietly(method, params, session))
            _BACKGROUND.add(task)
            task.add_done_callback(_BACKGROUND.discard)

    async def _quietly(self, method: str, params: dict | None, session: str) -> None:
        try:
            await self.send(method, params, session=session, timeout=POST_TIMEOUT)
        except (CdpError, TimeoutError):
            pass

    async def _read(self) -> None:
        try:
            while True:
                message = json.loads((await self._pipe_in.readuntil(b"\0"))[:-1])
                if not isinstance(message, dict):
                    break
                self._dispatch(message)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass        # closed, a message past MAX_MESSAGE_BYTES, or not JSON
        finally:
            for answer in self._waiting.values():
                if not answer.done():
                    answer.set_exception(CdpClosed("the browser connection closed"))
            for listener in list(self._listeners.values()):
                listener("", {})        # "" : the connection is gone

    def _dispatch(self, message: dict) -> None:
        ident = message.get("id")
        if ident is not None:
            answer = self._waiting.get(ident)
            if answer is not None and not answer.done():
                if "error" in message:
                    answer.set_exception(CdpError(str(message["error"].get("message", message["error"]))))
                else:
                    answer.set_result(message.get("result", {}))
            return
        listener = self._listeners.get(message.get("sessionId", ""))
        if listener is not None:
            listener(message.get("method", ""), message.get("params", {}))

    async def close(self) -> None:
        self._pipe_out.close()
        self._read_transport.close()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)


POST_TIMEOUT = 5.0
_BACKGROUND: set[asyncio.Task] = set()

