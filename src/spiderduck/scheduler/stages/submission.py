"""Stage 1, the Tweet Processor (Decoder): a submission becomes one or more URLs.

Input: a Submission (one message from spiderduck.urls.submit). Output: the Outcomes of its URLs'
tasks (CrawlTask, one per URL), or none when it was split. Failure: InvalidMessage (not
retryable: dead-lettered); a failed resubmit raises BusError (retried in place as an outage).
This is one of the scheduler's three protobuf edges: it reads UrlSubmission, through
src/spiderduck/bus/submissions.py's decode_submission (the one owner of a submission's bytes).

Accepted on spiderduck.urls.submit:
  - protobuf UrlSubmission (header Content-Type: application/x-protobuf)
  - JSON {"url": "..."} / {"urls": [...]} / {"tweet": "..."}, each with the optional
    "refresh" (true/false), "id" and "source" (strings of at most MAX_LABEL_CHARS)
  - a bare URL (UTF-8 text)
Anything else raises InvalidMessage, which the consumer dead-letters.

A submission with the header SpiderDuck-Reply-To (an _INBOX subject: a ResolveUrl call waiting)
has its outcome sent there instead of announced (CrawlTask.reply_to).

A submission of several URLs (a list, or a tweet: every URL in it, in order of appearance) is
split: each URL goes back on the subject as a message of its own, carrying its place (url_index,
url_count, echoed in its event so a consumer can pick the card) (Decoder's `resubmit`), so each has its own outcome, retries and dead letter. A
URL that failed is never retried with those that succeeded. The parts keep the submission's refresh,
id and source, and carry a Nats-Msg-Id made of
the original's stream sequence, so a split repeated after a crash is dropped by JetStream's
duplicate window, and the original's submit time, so latency still counts from the producer.

A message holds at most MAX_URLS_PER_MESSAGE (100) URLs; a tweet or list of more is split all the
same, its first 100 URLs as above, and those past the limit are dead-lettered (`dead_letter`,
publish to spiderduck.urls.dead): one letter per 100 of them, whose reason names their places and
the limit and whose data submits them alone (spiderduck.bus.submissions.over_limit). The message is acked
only once both are published. A Decoder that cannot split (no `resubmit` or `dead_letter`, or a
submission not read from the stream) refuses such a message whole (InvalidMessage, naming the
limit), so no URL of it is ever dropped unsaid.
"""
from __future__ import annotations

import asyncio

from spiderduck.bus import submissions
from spiderduck.core.errors import InvalidMessage
from spiderduck.bus.submissions import (MAX_URLS_PER_MESSAGE, DeadLetter, Decoded, Resubmit, decode_submission,
                                reply_subject)
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, Outcome, Submission


class Decoder:
    """One submission's URLs: one URL goes on down the stages; several are split into messages of
    their own by `resubmit` (publish to spiderduck.urls.submit). Without `resubmit`, or for a
    submission not read from the stream, several run here at once and the first failure fails all.
    """

    def __init__(self, resubmit: Resubmit | None = None, dead_letter: DeadLetter | None = None):
        self._resubmit = resubmit
        self._dead_letter = dead_letter

    async def __call__(self, submission: Submission, next: Next[CrawlTask, Outcome]) -> tuple[Outcome, ...]:
        decoded = decode_submission(submission.data, submission.headers)
        splits = self._resubmit is not None and bool(submission.stream_seq)
        if decoded.over and not (splits and self._dead_letter is not None):
            raise InvalidMessage(f"{len(decoded.urls) + len(decoded.over)} URLs are over the limit of "
                                 f"{MAX_URLS_PER_MESSAGE} URLs per message and cannot be split here: "
                                 "none was processed")
        if len(decoded.urls) > 1 and splits:
            await self._split(submission, decoded)
            for letter, msg_id in submissions.over_limit(decoded, submission.headers, delivery=submission.delivery,
                                                         stream_seq=submission.stream_seq):
                await self._dead_letter(letter, msg_id)
            return ()
        reply_to = reply_subject(submission.headers)
        tasks = [CrawlTask(submitted=u, received_at=submission.received_at, attempt=submission.delivery,
                           refresh=decoded.refresh, submission_id=decoded.id, source=decoded.source,
                           reply_to=reply_to, place=decoded.place(i))
                 for i, u in enumerate(decoded.urls)]
        results = await asyncio.gather(*(next(t) for t in tasks), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        return tuple(results)

    async def _split(self, submission: Submission, decoded: Decoded) -> None:
        for i, url in enumerate(decoded.urls):
            part = submissions.encode(url, source=decoded.source, refresh=decoded.refresh,
                                      submission_id=decoded.id, url_index=i, url_count=len(decoded.urls),
                                      msg_id=f"spiderduck-split-{submission.stream_seq}-{i}",
                                      submitted_at=submission.received_at)
            await self._resubmit(part.data, part.headers)
