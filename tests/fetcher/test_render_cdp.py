"""src/spiderduck/fetcher/render/cdp.py over real pipes, the test playing the browser's end
(`--remote-debugging-pipe`: NUL-separated JSON): answers matched by id, events to their session's
listener, a message past MAX_MESSAGE_BYTES or not JSON closes the connection (every waiting
command fails with CdpClosed), the browser's end closing does too, and an unanswered command
times out."""
from __future__ import annotations

import asyncio
import json
import os

import pytest

from spiderduck.fetcher.render.cdp import MAX_MESSAGE_BYTES, CdpClosed, CdpConnection, CdpError


class FakeBrowserEnd:
    """The browser's ends of the two pipes: reads our commands, writes what the test says."""

    def __init__(self):
        self.commands_in, commands_out = os.pipe()
        answers_in, self.answers_out = os.pipe()
        self.ours = (commands_out, answers_in)
        self._buffer = b""

    async def command(self) -> dict:
        while b"\0" not in self._buffer:
            self._buffer += await asyncio.to_thread(os.read, self.commands_in, 65536)
        line, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(line)

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[await asyncio.to_thread(os.write, self.answers_out, view):]

    async def answer(self, message: dict) -> None:
        await self.write(json.dumps(message).encode() + b"\0")

    def close(self) -> None:
        for fd in (self.commands_in, self.answers_out):
            try:
                os.close(fd)
            except OSError:
                pass


@pytest.fixture
async def pipe():
    browser = FakeBrowserEnd()
    cdp = await CdpConnection.over_pipe(*browser.ours)
    yield cdp, browser
    browser.close()
    await cdp.close()


async def test_answers_by_id_and_events_to_their_session(pipe):
    cdp, browser = pipe
    events = []
    cdp.listen("S1", lambda method, params: events.append((method, params)))
    sent = asyncio.create_task(cdp.send("Page.navigate", {"url": "x"}, session="S1", timeout=5))
    command = await browser.command()
    assert command == {"id": command["id"], "method": "Page.navigate", "params": {"url": "x"},
                       "sessionId": "S1"}
    await browser.answer({"method": "Page.loadEventFired", "params": {"t": 1}, "sessionId": "S1"})
    await browser.answer({"method": "Ignored.event", "params": {}, "sessionId": "other"})
    await browser.answer({"id": command["id"], "result": {"frameId": "F", "big": "x" * (1 << 20)}})
    result = await sent
    assert result["frameId"] == "F" and len(result["big"]) == 1 << 20
    assert events == [("Page.loadEventFired", {"t": 1})]

    refused = asyncio.create_task(cdp.send("Nope.nope", timeout=5))
    await browser.answer({"id": (await browser.command())["id"], "error": {"message": "no such method"}})
    with pytest.raises(CdpError, match="no such method"):
        await refused
    assert not cdp.closed


async def test_an_unanswered_command_times_out(pipe):
    cdp, browser = pipe
    with pytest.raises(TimeoutError):
        await cdp.send("Browser.getVersion", timeout=0.2)
    assert not cdp.closed


@pytest.mark.parametrize("bad", ["too large", "not json", "closed"])
async def test_a_bad_or_closed_pipe_fails_every_waiting_command(pipe, bad):
    cdp, browser = pipe
    gone = []
    cdp.listen("", lambda method, params: gone.append(method))
    waiting = asyncio.create_task(cdp.send("Browser.getVersion", timeout=30))
    await browser.command()
    if bad == "too large":      # no NUL within MAX_MESSAGE_BYTES
        writing = asyncio.create_task(browser.write(b'{"id": 1, "result": "' + b"x" * MAX_MESSAGE_BYTES))
    elif bad == "not json":
        await browser.write(b"{not json\0")
    else:
        browser.close()
    with pytest.raises(CdpClosed):
        await asyncio.wait_for(waiting, 10)
    assert cdp.closed and gone == [""]
    with pytest.raises(CdpClosed):
        await cdp.send("Browser.getVersion", timeout=1)
    if bad == "too large":      # the writer ends: all written, or EPIPE once our end closed
        browser.close()
        await cdp.close()
        await asyncio.wait_for(asyncio.gather(writing, return_exceptions=True), 10)
