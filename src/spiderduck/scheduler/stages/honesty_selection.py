"""Stage 7, the Honesty Selector: which crawls get a second look as a browser (issue 43).

Input: a CrawlTask the decider chose to crawl. Output: the Outcome of the stages inside it, with
`honesty_due` (the reasons a look is due, scheduler.honesty_select) and the record's `honesty`
as it is stored and announced first. process.honesty `off`: nothing is due and the record has no
honesty. `all`: every eligible crawl (one whose chain got an answer) is due. `triggered`: an
eligible crawl with a reason to look is due while the minute's process.honesty_budget allows; past
it, its record says `unchecked` at once (no second look, no second event). A due crawl's record
keeps the verdict of the record it renews until its own check (the Honesty Checker, outside the
Notifier) replaces it; a crawl with no reason to look drops an old verdict, which described a
chain the URL no longer has. It sits inside the Crawl Recorder, so what it sets is what is stored.
"""
from __future__ import annotations

import time

from spiderduck.core.metrics import Recorder
from spiderduck.core.record import Honesty
from spiderduck.extract.honesty import UNCHECKED
from spiderduck.scheduler import honesty_select
from spiderduck.scheduler.stages.chain import Next
from spiderduck.scheduler.task import CrawlTask, Outcome
from spiderduck.core.frozen import evolve


class HonestySelector:
    def __init__(self, *, mode: str, budget: float, refresh_max_delay: float, metrics: Recorder,
                 clock=time.monotonic):
        self._mode = mode                   # process.honesty
        self._metrics = metrics             # recorder("honesty"): an unchecked URL is counted here
        self._refresh_max_delay = refresh_max_delay
        self._budget = honesty_select.Budget(budget, clock=clock)

    async def __call__(self, task: CrawlTask, next: Next[CrawlTask, Outcome]) -> Outcome:
        outcome: Outcome = await next(task)
        if self._mode == "off" or not honesty_select.eligible(outcome):
            return outcome
        kept = task.previous.honesty if task.previous is not None else None
        if self._mode == "all":
            return evolve(outcome, honesty_due=honesty_select.ALL, record=evolve(outcome.record, honesty=kept))
        self._budget.crawled()
        why = honesty_select.reasons(outcome, self._refresh_max_delay)
        if not why:
            return evolve(outcome, record=evolve(outcome.record, honesty=None))
        if not self._budget.admit():
            self._metrics.count("checks", verdict=UNCHECKED)
            return evolve(outcome, record=evolve(outcome.record, honesty=Honesty(UNCHECKED)))
        return evolve(outcome, honesty_due=why, record=evolve(outcome.record, honesty=kept))
