"""The metadata API role: GetUrlMetadata, ResolveUrl and ExplainUrl over the stores (gRPC)."""
