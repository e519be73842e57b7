from spiderduck.v1 import metadata_pb2 as _metadata_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Header(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class FetchRequest(_message.Message):
    __slots__ = ("url", "purpose", "deadline_seconds")
    URL_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    url: str
    purpose: str
    deadline_seconds: float
    def __init__(self, url: _Optional[str] = ..., purpose: _Optional[str] = ..., deadline_seconds: _Optional[float] = ...) -> None: ...

class FetchTiming(_message.Message):
    __slots__ = ("queued_seconds", "robots_seconds", "origin_seconds")
    QUEUED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ROBOTS_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    queued_seconds: float
    robots_seconds: float
    origin_seconds: float
    def __init__(self, queued_seconds: _Optional[float] = ..., robots_seconds: _Optional[float] = ..., origin_seconds: _Optional[float] = ...) -> None: ...

class FetchResponse(_message.Message):
    __slots__ = ("status", "http_status", "headers", "body", "truncated", "error", "timing", "remote_address", "fetcher_id", "fetched_at")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    HEADERS_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    TIMING_FIELD_NUMBER: _ClassVar[int]
    REMOTE_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    FETCHER_ID_FIELD_NUMBER: _ClassVar[int]
    FETCHED_AT_FIELD_NUMBER: _ClassVar[int]
    status: _metadata_pb2.Status
    http_status: int
    headers: _containers.RepeatedCompositeFieldContainer[Header]
    body: bytes
    truncated: bool
    error: str
    timing: FetchTiming
    remote_address: str
    fetcher_id: str
    fetched_at: float
    def __init__(self, status: _Optional[_Union[_metadata_pb2.Status, str]] = ..., http_status: _Optional[int] = ..., headers: _Optional[_Iterable[_Union[Header, _Mapping]]] = ..., body: _Optional[bytes] = ..., truncated: _Optional[bool] = ..., error: _Optional[str] = ..., timing: _Optional[_Union[FetchTiming, _Mapping]] = ..., remote_address: _Optional[str] = ..., fetcher_id: _Optional[str] = ..., fetched_at: _Optional[float] = ...) -> None: ...
