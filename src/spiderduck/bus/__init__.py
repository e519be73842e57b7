"""NATS: subjects and streams, submissions, claims, queued markers, credentials, shards."""
