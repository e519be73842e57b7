"""The read side: resolve a URL, explain a record, each platform's findings."""
