"""gRPC plumbing: servers and channels, TLS, the request guard and caller identity, the fetcher
admin client."""
