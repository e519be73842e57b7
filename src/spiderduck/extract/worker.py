"""An extraction worker process: pages in on stdin, their metadata out on stdout.

    python -m spiderduck.extract.worker PARSER PREFER_DATES BUDGET_SECONDS

Run by ExtractionPool (pool.py), never by hand. An answer's frame is a 4-byte big-endian length
and a pickle; a job's (JOB_HEADER) is the lengths of its pickle and of its page, then the two:
the page goes out of band (pickle protocol 5), so it is never copied into a pickle. It answers "ready" once its imports are done, then, one job at a time and in
order, for each `(job_id, body, url, content_type)` answers `(job_id, "ok", PageMetadata)` or
`(job_id, "error", reason)` (a job marked `explain` answers `(PageMetadata, offers)` instead:
spiderduck.extract.rejected; a file's job, its parts' offsets and lengths in `file`, answers its
FileCard: spiderduck.extract.files.file_card); the page's structured data comes as protobuf Struct bytes
(spiderduck.wire.record_proto.StructuredData). It ends when stdin closes. Anything printed goes to stderr, so
nothing but frames reaches the pool.

Each job runs under a real-time interval timer of BUDGET_SECONDS whose signal, SIGALRM, has its
default action: past the budget the kernel ends this process, even inside the parser's C code.
The pool reads that exit as the page's timeout.
"""
from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from spiderduck.core.frozen import evolve

HEADER = struct.Struct(">I")
JOB_HEADER = struct.Struct(">II")


def read_exactly(fh, n: int) -> bytes | None:
    data = fh.read(n)
    return data if data is not None and len(data) == n else None


def read_frame(fh):
    head = read_exactly(fh, HEADER.size)
    if head is None:
        return None
    body = read_exactly(fh, HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def read_job(fh):
    """A job as the pool writes it (channel.Worker.send), its page out of band; None at the end."""
    head = read_exactly(fh, JOB_HEADER.size)
    if head is None:
        return None
    size, page_size = JOB_HEADER.unpack(head)
    data = read_exactly(fh, size)
    page = read_exactly(fh, page_size) if data is not None else None
    return None if page is None else pickle.loads(data, buffers=[page])


def write_frame(fh, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    fh.write(HEADER.pack(len(data)) + data)
    fh.flush()


def file_bytes(body, file):
    """The FileBytes a file's job carries: (total, ((offset, length), ...)) over `body`, the
    parts' bytes one after the other."""
    from spiderduck.extract.files import FileBytes
    total, spans = file[0], file[1]
    parts, at = [], 0
    for offset, length in spans:
        parts.append((offset, bytes(body[at:at + length])))
        at += length
    return FileBytes(total, tuple(parts))


def main(argv: list[str]) -> int:
    parser, robots_token, budget = argv[0], argv[1], float(argv[2])
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    # The pool ends this worker by closing stdin (which closes too if the pool's process dies).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    jobs = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)                          # print() and stray writes go to stderr, not the frames
    
    from spiderduck.extract import files
    from spiderduck.extract.page import extract_page
    from spiderduck.extract.rejected import explain_page
    from spiderduck.wire.record_proto import StructuredData

    import gc
    gc.freeze()                            # what the imports made lives as long as the worker
    gc.set_threshold(10_000, *gc.get_threshold()[1:])   # as the roles do (src/spiderduck/cli/roles.py serve)
    write_frame(out, "ready")
    while (job := read_job(jobs)) is not None:
        job_id, body, url, content_type, http_status, explain, file = job
        signal.setitimer(signal.ITIMER_REAL, budget)
        try:
            if file is not None and file[2:] == ("range",):
                value = files.next_range(content_type or "", url, file_bytes(body, file))
            elif file is not None:
                value = files.file_card(content_type or "", url, file_bytes(body, file))
            else:
                if explain:
                    page, offers = explain_page(body, url, content_type, parser=parser,
                                                robots_token=robots_token, http_status=http_status)
                else:
                    page = extract_page(body, url, content_type, parser=parser, robots_token=robots_token,
                                        http_status=http_status)
                if page.structured_data:   # encoded here, once, rather than on the event loop
                    page = evolve(page, structured_data=StructuredData.from_dict(page.structured_data))
                value = (page, offers) if explain else page
        except Exception as exc:   # noqa: BLE001 -- one page's failure is that page's answer
            answer = (job_id, "error", f"{type(exc).__name__}: {exc}"[:500])
        else:
            answer = (job_id, "ok", value)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        write_frame(out, answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
