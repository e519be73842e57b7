"""An origin serving one file, with or without Range (RFC 9110 14), that counts what it sends:
each request's Range and Accept-Encoding, its answer's status, and the body bytes its socket took
(written until the reader hung up). A localweb route handler.

    origin = RangeOrigin(data, mode="honour")
    url = localweb.route("files.test", "/files/Annual_Report-2024.png", origin)

Modes: honour (206 with Content-Range), ignore (200 and the whole file, whatever the Range),
chunked (as honour, but the 200 declares no Content-Length: the size is only in Content-Range),
bad-content-range, wrong-offset (a 206 of another part than asked), unsatisfiable (416), overrun
(a 206 from the start asked for but running 64 times past its end), encoded (a 206 sent gzipped),
error-page (a Range request answered by a 200 HTML error page).
The server's send buffer is made small, so what it counts as sent is close to what the reader took.
"""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass

from aiohttp import web

CHUNK = 16 * 1024
SEND_BUFFER = 32 * 1024
_RANGE = re.compile(r"bytes=(\d+)-(\d+)")


@dataclass
class Served:
    range: str            # the request's Range header ('' none)
    accept_encoding: str
    status: int
    sent: int = 0         # body bytes written before the reader hung up (or all of them)


class RangeOrigin:
    def __init__(self, data: bytes, *, mode: str = "honour", content_type: str = "image/png"):
        self.data = data
        self.mode = mode
        self.content_type = content_type
        self.served: list[Served] = []

    @property
    def sent(self) -> int:
        return sum(s.sent for s in self.served)

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        sock = request.transport.get_extra_info("socket") if request.transport else None
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        asked = request.headers.get("Range", "")
        served = Served(asked, request.headers.get("Accept-Encoding", ""), 200)
        self.served.append(served)
        headers = {"Content-Type": self.content_type, "Accept-Ranges": "bytes"}
        total = len(self.data)
        match = _RANGE.fullmatch(asked) if asked and self.mode != "ignore" else None
        if match is not None and self.mode == "error-page":
            page = b"<html><title>Range not allowed</title></html>" * 2000
            served.sent = len(page)
            return web.Response(body=page, content_type="text/html")
        if match is None:
            body = self.data
            if self.mode != "chunked":
                headers["Content-Length"] = str(total)
        else:
            start, end = int(match[1]), min(int(match[2]), total - 1)
            if self.mode == "unsatisfiable":
                served.status = 416
                return web.Response(status=416, headers={"Content-Range": f"bytes */{total}"})
            served.status = 206
            if self.mode == "wrong-offset":
                start, end = start + 1, end + 1
            if self.mode == "overrun":
                end = min(total - 1, end + 64 * (end - start + 1))
            if self.mode == "encoded":
                import gzip
                headers["Content-Encoding"] = "gzip"
                body = gzip.compress(self.data[start:end + 1])
                headers["Content-Range"] = f"bytes {start}-{end}/{total}"
                headers["Content-Length"] = str(len(body))
                response = web.StreamResponse(status=206, headers=headers)
                await response.prepare(request)
                await response.write(body)
                served.sent = len(body)
                return response
            body = self.data[start:end + 1]
            headers["Content-Range"] = ("bytes ?-?/many" if self.mode == "bad-content-range"
                                        else f"bytes {start}-{end}/{total}")
            headers["Content-Length"] = str(len(body))
        response = web.StreamResponse(status=served.status, headers=headers)
        await response.prepare(request)
        try:
            for at in range(0, len(body), CHUNK):
                await response.write(body[at:at + CHUNK])
                served.sent += len(body[at:at + CHUNK])
            await response.write_eof()
        except (ConnectionError, RuntimeError):     # the reader hung up: what it took is counted
            pass
        return response
