"""The scheduler's stages, one module each, named for what it produces or decides.

In compose order (outer first; src/spiderduck/scheduler/pipeline.py builds them in this order):

    submission      Decoder           a message -> one task per URL (or split into messages)
    honesty_check   HonestyChecker    after the card: a browser's look, its verdict stored and announced
    announcement    Notifier          the UrlProcessed event, once the outcome is stored
    sighting        SightingRecorder  records the sighting: its share; a rejection's record
    crawl_decision  CrawlDecider      crawl, or answer FRESH / JOINED / REJECTED
    crawl_record    CrawlRecorder     records the crawl: WARC records, the record, its aliases
    honesty_selection HonestySelector which crawls get a browser's look (process.honesty, its budget)
    redirect_chain  RedirectFollower  the chain of hops, each through its domain's fetcher
    file_ranges     FileReader        a file's byte ranges its card needs (a final answer not HTML)
    related         RelatedFetcher    the image's size and the oEmbed fields a page lacks
    record          PostProcessor     the UrlRecord from the final hop (innermost)

`chain` holds what makes them a chain: Stage, Next, compose, Pipeline, StageFailed; with traces
on, each stage's call is a span. No stage imports another (tests/scheduler/test_stage_imports.py):
what two stages share lives beside them in src/spiderduck/scheduler (task.py, storing.py), and the
spans of their store calls come from the stores as the pipeline is wired (traced_stores.py). Stages
speak the dataclasses of src/spiderduck/scheduler/task.py and src/spiderduck/core/record.py; protobuf appears only at the
edges (submission's decoding, src/spiderduck/scheduler/events.py, src/spiderduck/scheduler/fetcher_client.py).
"""
