from spiderduck.v1 import metadata_pb2 as _metadata_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DomainState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DOMAIN_STATE_UNSPECIFIED: _ClassVar[DomainState]
    DOMAIN_ACTIVE: _ClassVar[DomainState]
    DOMAIN_PAUSED: _ClassVar[DomainState]
    DOMAIN_HALTED: _ClassVar[DomainState]
DOMAIN_STATE_UNSPECIFIED: DomainState
DOMAIN_ACTIVE: DomainState
DOMAIN_PAUSED: DomainState
DOMAIN_HALTED: DomainState

class Header(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class FetchRequest(_message.Message):
    __slots__ = ("url", "purpose", "deadline_seconds", "max_body_bytes", "if_none_match", "if_modified_since", "render", "range", "profile", "cookie")
    URL_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MAX_BODY_BYTES_FIELD_NUMBER: _ClassVar[int]
    IF_NONE_MATCH_FIELD_NUMBER: _ClassVar[int]
    IF_MODIFIED_SINCE_FIELD_NUMBER: _ClassVar[int]
    RENDER_FIELD_NUMBER: _ClassVar[int]
    RANGE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    COOKIE_FIELD_NUMBER: _ClassVar[int]
    url: str
    purpose: str
    deadline_seconds: float
    max_body_bytes: int
    if_none_match: str
    if_modified_since: str
    render: bool
    range: str
    profile: str
    cookie: str
    def __init__(self, url: _Optional[str] = ..., purpose: _Optional[str] = ..., deadline_seconds: _Optional[float] = ..., max_body_bytes: _Optional[int] = ..., if_none_match: _Optional[str] = ..., if_modified_since: _Optional[str] = ..., render: _Optional[bool] = ..., range: _Optional[str] = ..., profile: _Optional[str] = ..., cookie: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("status", "http_status", "headers", "body", "truncated", "error", "timing", "remote_address", "fetcher_id", "fetched_at", "rendered", "render_outcome")
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
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    RENDER_OUTCOME_FIELD_NUMBER: _ClassVar[int]
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
    rendered: bytes
    render_outcome: str
    def __init__(self, status: _Optional[_Union[_metadata_pb2.Status, str]] = ..., http_status: _Optional[int] = ..., headers: _Optional[_Iterable[_Union[Header, _Mapping]]] = ..., body: _Optional[bytes] = ..., truncated: _Optional[bool] = ..., error: _Optional[str] = ..., timing: _Optional[_Union[FetchTiming, _Mapping]] = ..., remote_address: _Optional[str] = ..., fetcher_id: _Optional[str] = ..., fetched_at: _Optional[float] = ..., rendered: _Optional[bytes] = ..., render_outcome: _Optional[str] = ...) -> None: ...

class DomainInfo(_message.Message):
    __slots__ = ("domain", "owner", "state", "reason", "paused_until", "queue_depth", "rate", "rate_source", "interval_seconds", "crawl_delay_seconds", "backoff_seconds", "hold_seconds", "hold_reason", "status_counts", "requests", "errors", "error_rate", "consecutive_failures", "window_seconds", "idle_seconds")
    class StatusCountsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PAUSED_UNTIL_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    RATE_SOURCE_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CRAWL_DELAY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BACKOFF_SECONDS_FIELD_NUMBER: _ClassVar[int]
    HOLD_SECONDS_FIELD_NUMBER: _ClassVar[int]
    HOLD_REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_COUNTS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    ERROR_RATE_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    WINDOW_SECONDS_FIELD_NUMBER: _ClassVar[int]
    IDLE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    domain: str
    owner: str
    state: DomainState
    reason: str
    paused_until: float
    queue_depth: int
    rate: float
    rate_source: str
    interval_seconds: float
    crawl_delay_seconds: float
    backoff_seconds: float
    hold_seconds: float
    hold_reason: str
    status_counts: _containers.ScalarMap[str, int]
    requests: int
    errors: int
    error_rate: float
    consecutive_failures: int
    window_seconds: float
    idle_seconds: float
    def __init__(self, domain: _Optional[str] = ..., owner: _Optional[str] = ..., state: _Optional[_Union[DomainState, str]] = ..., reason: _Optional[str] = ..., paused_until: _Optional[float] = ..., queue_depth: _Optional[int] = ..., rate: _Optional[float] = ..., rate_source: _Optional[str] = ..., interval_seconds: _Optional[float] = ..., crawl_delay_seconds: _Optional[float] = ..., backoff_seconds: _Optional[float] = ..., hold_seconds: _Optional[float] = ..., hold_reason: _Optional[str] = ..., status_counts: _Optional[_Mapping[str, int]] = ..., requests: _Optional[int] = ..., errors: _Optional[int] = ..., error_rate: _Optional[float] = ..., consecutive_failures: _Optional[int] = ..., window_seconds: _Optional[float] = ..., idle_seconds: _Optional[float] = ...) -> None: ...

class ListDomainsRequest(_message.Message):
    __slots__ = ("domains",)
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    domains: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, domains: _Optional[_Iterable[str]] = ...) -> None: ...

class ListDomainsResponse(_message.Message):
    __slots__ = ("fetcher_id", "domains")
    FETCHER_ID_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    fetcher_id: str
    domains: _containers.RepeatedCompositeFieldContainer[DomainInfo]
    def __init__(self, fetcher_id: _Optional[str] = ..., domains: _Optional[_Iterable[_Union[DomainInfo, _Mapping]]] = ...) -> None: ...

class PauseDomainRequest(_message.Message):
    __slots__ = ("domain", "seconds")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    domain: str
    seconds: float
    def __init__(self, domain: _Optional[str] = ..., seconds: _Optional[float] = ...) -> None: ...

class ResumeDomainRequest(_message.Message):
    __slots__ = ("domain",)
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    domain: str
    def __init__(self, domain: _Optional[str] = ...) -> None: ...

class SetDomainRateRequest(_message.Message):
    __slots__ = ("domain", "rate")
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    RATE_FIELD_NUMBER: _ClassVar[int]
    domain: str
    rate: float
    def __init__(self, domain: _Optional[str] = ..., rate: _Optional[float] = ...) -> None: ...
