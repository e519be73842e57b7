"""The names a producer and a subscriber of the service must agree on, and the service's
defaults the client uses.

The subjects, the content type and the queued-marker bucket are defined here, once: the service
imports them (spiderduck.bus.streams, spiderduck.bus.pending), since the client must not import
the service. The defaults below them are copies of the service's config defaults, held equal by
tests/client/test_client_library.py.
"""
SUBMIT_SUBJECT = "spiderduck.urls.submit"          # the work queue URLs are submitted to
# Requests to submit: the metadata-api marks the URLs queued, publishes them to SUBMIT_SUBJECT and
# answers (empty, or why not), so a producer need not write the queued-marker bucket itself.
QUEUE_SUBJECT = "spiderduck.urls.queue"
PROCESSED_SUBJECT = "spiderduck.events.processed"  # where the scheduler announces each outcome
DISPUTED_SUBJECT = "spiderduck.events.disputed"    # a URL whose browser's look differs from its card (issue 43)
PROTOBUF_CONTENT_TYPE = "application/x-protobuf"   # Content-Type of a protobuf UrlSubmission
QUEUED_BUCKET = "spiderduck_url_queued"            # KV bucket of queued markers (keys: client.keys)

DEFAULT_METADATA = "127.0.0.1:50051"      # metadata_api.listen's default
MAX_URLS = 300                            # metadata_api.max_urls's default: URLs per GetUrlMetadata
RESOLUTION_KEY = "spiderduck-resolution"  # ResolveUrl's trailing metadata: how it was answered
QUEUED_TTL = 3600.0                       # streams.queued_ttl's default (the marker bucket's TTL)
PUBLISH_WINDOW = 256                      # submissions in flight at once (acks awaited together)
CLOSE_CALLS_TIMEOUT = 5.0                 # seconds Client.close() lets cancelled calls finish
