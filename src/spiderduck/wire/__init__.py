"""The record and a fetch in protobuf and JSON, and their migrations."""
