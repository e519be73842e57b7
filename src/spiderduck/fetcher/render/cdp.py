"""A minimal Chrome DevTools Protocol client over the browser's websocket (aiohttp).

Commands are matched to their answers by id; events go to the listener registered for their
session (flattened sessions: `sessionId` on each message; "" is the browser's own). Every wait is
bounded by the caller's timeout; when the socket closes (the browser exited or crashed) every
command waiting fails with `CdpClosed`, and so does every command sent afterwards."""
from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Callable

import aiohttp

from spiderduck.core.errors import SpiderDuckError

Listener = Callable[[str, dict], None]      # (method, params), called in the reader task

MAX_MESSAGE_BYTES = 64 * 1024 * 1024        # an answer larger (a huge outerHTML) closes the socket


class CdpError(SpiderDuckError):
    """The browser answered a command with an error."""


class CdpClosed(CdpError):
    """The websocket closed: the browser is gone (or was closed)."""
    retryable = True


class CdpConnection:
    def __init__(self, session: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse):
        self._session = session
        self._ws = ws
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._listeners: dict[str, Listener] = {}
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, url: str, *, timeout: float) -> "CdpConnection":
        session = aiohttp.ClientSession()
        try:
            async with asyncio.timeout(timeout):
                ws = await session.ws_connect(url, max_msg_size=MAX_MESSAGE_BYTES,
                                              timeout=aiohttp.ClientWSTimeout(ws_close=1.0))
        except BaseException:
            await session.close()
            raise
        return cls(session, ws)

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
                await self._ws.send_str(json.dumps(message))
                return await answer
        except (ConnectionError, aiohttp.ClientError) as exc:
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
            async for msg in self._ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                self._dispatch(json.loads(msg.data))
        except (aiohttp.ClientError, ConnectionError, ValueError):
            pass
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
        await self._ws.close()
        await self._session.close()
        self._reader.cancel()
        await asyncio.gather(self._reader, return_exceptions=True)


POST_TIMEOUT = 5.0
_BACKGROUND: set[asyncio.Task] = set()

