"""The fetcher role: gRPC FetcherService, one hop at a time, polite on its domain (per-domain
queues), allowed by robots.txt, through the address guard; renders JavaScript shells when asked."""
