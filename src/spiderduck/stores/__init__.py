"""Metadata stores (SQLite, Cassandra) and content stores (WARC files on disk, HDFS), behind
metadata.py's and content.py's interfaces, opened by URL in open.py."""
