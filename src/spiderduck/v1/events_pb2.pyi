import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from spiderduck.v1 import metadata_pb2 as _metadata_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Resolution(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESOLUTION_UNSPECIFIED: _ClassVar[Resolution]
    CRAWLED: _ClassVar[Resolution]
    FRESH: _ClassVar[Resolution]
    JOINED: _ClassVar[Resolution]
    REJECTED: _ClassVar[Resolution]
    REVALIDATED: _ClassVar[Resolution]
    STALE: _ClassVar[Resolution]
RESOLUTION_UNSPECIFIED: Resolution
CRAWLED: Resolution
FRESH: Resolution
JOINED: Resolution
REJECTED: Resolution
REVALIDATED: Resolution
STALE: Resolution

class UrlSubmission(_message.Message):
    __slots__ = ("url", "tweet", "source", "refresh", "id", "url_index", "url_count")
    URL_FIELD_NUMBER: _ClassVar[int]
    TWEET_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REFRESH_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    URL_INDEX_FIELD_NUMBER: _ClassVar[int]
    URL_COUNT_FIELD_NUMBER: _ClassVar[int]
    url: str
    tweet: str
    source: str
    refresh: bool
    id: str
    url_index: int
    url_count: int
    def __init__(self, url: _Optional[str] = ..., tweet: _Optional[str] = ..., source: _Optional[str] = ..., refresh: _Optional[bool] = ..., id: _Optional[str] = ..., url_index: _Optional[int] = ..., url_count: _Optional[int] = ...) -> None: ...

class UrlProcessed(_message.Message):
    __slots__ = ("url", "canonical_url", "status", "resolution", "metadata", "processed_at", "latency_seconds", "origin_seconds", "submission_id", "source", "changed_fields", "url_index", "url_count", "fetch_mode")
    URL_FIELD_NUMBER: _ClassVar[int]
    CANONICAL_URL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_AT_FIELD_NUMBER: _ClassVar[int]
    LATENCY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    SUBMISSION_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELDS_FIELD_NUMBER: _ClassVar[int]
    URL_INDEX_FIELD_NUMBER: _ClassVar[int]
    URL_COUNT_FIELD_NUMBER: _ClassVar[int]
    FETCH_MODE_FIELD_NUMBER: _ClassVar[int]
    url: str
    canonical_url: str
    status: _metadata_pb2.Status
    resolution: Resolution
    metadata: _metadata_pb2.UrlMetadata
    processed_at: _timestamp_pb2.Timestamp
    latency_seconds: float
    origin_seconds: float
    submission_id: str
    source: str
    changed_fields: _containers.RepeatedScalarFieldContainer[str]
    url_index: int
    url_count: int
    fetch_mode: str
    def __init__(self, url: _Optional[str] = ..., canonical_url: _Optional[str] = ..., status: _Optional[_Union[_metadata_pb2.Status, str]] = ..., resolution: _Optional[_Union[Resolution, str]] = ..., metadata: _Optional[_Union[_metadata_pb2.UrlMetadata, _Mapping]] = ..., processed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., latency_seconds: _Optional[float] = ..., origin_seconds: _Optional[float] = ..., submission_id: _Optional[str] = ..., source: _Optional[str] = ..., changed_fields: _Optional[_Iterable[str]] = ..., url_index: _Optional[int] = ..., url_count: _Optional[int] = ..., fetch_mode: _Optional[str] = ...) -> None: ...
