"""The service's names and defaults the client uses (held equal to the service's by a test)."""
DEFAULT_METADATA = "127.0.0.1:50051"      # metadata_api.listen's default
MAX_URLS = 300                            # metadata_api.max_urls's default: URLs per GetUrlMetadata
SUBMIT_SUBJECT = "spiderduck.urls.submit"
PROCESSED_SUBJECT = "spiderduck.events.processed"
PROTOBUF_CONTENT_TYPE = "application/x-protobuf"
RESOLUTION_KEY = "spiderduck-resolution"  # ResolveUrl's trailing metadata: how it was answered
QUEUED_TTL = 3600.0                       # streams.queued_ttl's default (the marker bucket's TTL)
PUBLISH_WINDOW = 256                      # submissions in flight at once (acks awaited together)
CLOSE_CALLS_TIMEOUT = 5.0                 # seconds Client.close() lets cancelled calls finish
