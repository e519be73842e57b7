"""The record and a fetch in protobuf and JSON, the record's size limits and what changed between
two records, and the migrations of old stored layouts."""
