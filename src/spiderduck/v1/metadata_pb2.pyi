import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Status(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATUS_UNSPECIFIED: _ClassVar[Status]
    OK: _ClassVar[Status]
    ROBOTS_DISALLOWED: _ClassVar[Status]
    BLOCKED_ADDRESS: _ClassVar[Status]
    INVALID_URL: _ClassVar[Status]
    DNS_ERROR: _ClassVar[Status]
    CONNECTION_ERROR: _ClassVar[Status]
    TIMEOUT: _ClassVar[Status]
    TOO_MANY_REDIRECTS: _ClassVar[Status]
    TOO_LARGE: _ClassVar[Status]
    HTTP_ERROR: _ClassVar[Status]
    UNSUPPORTED_CONTENT: _ClassVar[Status]
    INTERSTITIAL: _ClassVar[Status]
    FORGOTTEN: _ClassVar[Status]
STATUS_UNSPECIFIED: Status
OK: Status
ROBOTS_DISALLOWED: Status
BLOCKED_ADDRESS: Status
INVALID_URL: Status
DNS_ERROR: Status
CONNECTION_ERROR: Status
TIMEOUT: Status
TOO_MANY_REDIRECTS: Status
TOO_LARGE: Status
HTTP_ERROR: Status
UNSUPPORTED_CONTENT: Status
INTERSTITIAL: Status
FORGOTTEN: Status

class Redirect(_message.Message):
    __slots__ = ("url", "http_status", "kind")
    URL_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    url: str
    http_status: int
    kind: str
    def __init__(self, url: _Optional[str] = ..., http_status: _Optional[int] = ..., kind: _Optional[str] = ...) -> None: ...

class Image(_message.Message):
    __slots__ = ("url", "width", "height", "content_type")
    URL_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    url: str
    width: int
    height: int
    content_type: str
    def __init__(self, url: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., content_type: _Optional[str] = ...) -> None: ...

class Video(_message.Message):
    __slots__ = ("url", "width", "height", "content_type", "duration_ms")
    URL_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    url: str
    width: int
    height: int
    content_type: str
    duration_ms: int
    def __init__(self, url: _Optional[str] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., content_type: _Optional[str] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class Audio(_message.Message):
    __slots__ = ("url", "content_type", "duration_ms")
    URL_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    url: str
    content_type: str
    duration_ms: int
    def __init__(self, url: _Optional[str] = ..., content_type: _Optional[str] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("pages",)
    PAGES_FIELD_NUMBER: _ClassVar[int]
    pages: int
    def __init__(self, pages: _Optional[int] = ...) -> None: ...

class Label(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class Offer(_message.Message):
    __slots__ = ("price", "currency", "availability")
    PRICE_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    AVAILABILITY_FIELD_NUMBER: _ClassVar[int]
    price: str
    currency: str
    availability: str
    def __init__(self, price: _Optional[str] = ..., currency: _Optional[str] = ..., availability: _Optional[str] = ...) -> None: ...

class UrlMetadata(_message.Message):
    __slots__ = ("url", "canonical_url", "status", "http_status", "redirects", "content_type", "charset", "title", "description", "site_name", "author", "published_time", "lang", "image", "favicon", "type", "video", "structured_data", "share_count", "first_seen", "fetched_at", "content_ref", "final_url", "error", "content_length", "expires_at", "etag", "last_modified", "robots_directives", "clean_url", "removed_params", "sensitive", "embed_html", "fediverse_creator", "provenance", "fetch_mode", "truncated", "modified_time", "medium", "images", "logo", "theme_color", "theme_color_dark", "card_style", "labels", "offer", "word_count", "reading_time_s", "audio", "document", "file_size", "honesty")
    URL_FIELD_NUMBER: _ClassVar[int]
    CANONICAL_URL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    REDIRECTS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CHARSET_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SITE_NAME_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_TIME_FIELD_NUMBER: _ClassVar[int]
    LANG_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    FAVICON_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VIDEO_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_DATA_FIELD_NUMBER: _ClassVar[int]
    SHARE_COUNT_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEEN_FIELD_NUMBER: _ClassVar[int]
    FETCHED_AT_FIELD_NUMBER: _ClassVar[int]
    CONTENT_REF_FIELD_NUMBER: _ClassVar[int]
    FINAL_URL_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CONTENT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    ETAG_FIELD_NUMBER: _ClassVar[int]
    LAST_MODIFIED_FIELD_NUMBER: _ClassVar[int]
    ROBOTS_DIRECTIVES_FIELD_NUMBER: _ClassVar[int]
    CLEAN_URL_FIELD_NUMBER: _ClassVar[int]
    REMOVED_PARAMS_FIELD_NUMBER: _ClassVar[int]
    SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    EMBED_HTML_FIELD_NUMBER: _ClassVar[int]
    FEDIVERSE_CREATOR_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    FETCH_MODE_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_TIME_FIELD_NUMBER: _ClassVar[int]
    MEDIUM_FIELD_NUMBER: _ClassVar[int]
    IMAGES_FIELD_NUMBER: _ClassVar[int]
    LOGO_FIELD_NUMBER: _ClassVar[int]
    THEME_COLOR_FIELD_NUMBER: _ClassVar[int]
    THEME_COLOR_DARK_FIELD_NUMBER: _ClassVar[int]
    CARD_STYLE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    OFFER_FIELD_NUMBER: _ClassVar[int]
    WORD_COUNT_FIELD_NUMBER: _ClassVar[int]
    READING_TIME_S_FIELD_NUMBER: _ClassVar[int]
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    FILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    HONESTY_FIELD_NUMBER: _ClassVar[int]
    url: str
    canonical_url: str
    status: Status
    http_status: int
    redirects: _containers.RepeatedCompositeFieldContainer[Redirect]
    content_type: str
    charset: str
    title: str
    description: str
    site_name: str
    author: str
    published_time: _timestamp_pb2.Timestamp
    lang: str
    image: Image
    favicon: str
    type: str
    video: Video
    structured_data: _struct_pb2.Struct
    share_count: int
    first_seen: _timestamp_pb2.Timestamp
    fetched_at: _timestamp_pb2.Timestamp
    content_ref: str
    final_url: str
    error: str
    content_length: int
    expires_at: _timestamp_pb2.Timestamp
    etag: str
    last_modified: _timestamp_pb2.Timestamp
    robots_directives: _containers.RepeatedScalarFieldContainer[str]
    clean_url: str
    removed_params: _containers.RepeatedScalarFieldContainer[str]
    sensitive: bool
    embed_html: str
    fediverse_creator: str
    provenance: _containers.RepeatedCompositeFieldContainer[FieldSource]
    fetch_mode: str
    truncated: bool
    modified_time: _timestamp_pb2.Timestamp
    medium: str
    images: _containers.RepeatedCompositeFieldContainer[Image]
    logo: Image
    theme_color: str
    theme_color_dark: str
    card_style: str
    labels: _containers.RepeatedCompositeFieldContainer[Label]
    offer: Offer
    word_count: int
    reading_time_s: int
    audio: Audio
    document: Document
    file_size: int
    honesty: Honesty
    def __init__(self, url: _Optional[str] = ..., canonical_url: _Optional[str] = ..., status: _Optional[_Union[Status, str]] = ..., http_status: _Optional[int] = ..., redirects: _Optional[_Iterable[_Union[Redirect, _Mapping]]] = ..., content_type: _Optional[str] = ..., charset: _Optional[str] = ..., title: _Optional[str] = ..., description: _Optional[str] = ..., site_name: _Optional[str] = ..., author: _Optional[str] = ..., published_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., lang: _Optional[str] = ..., image: _Optional[_Union[Image, _Mapping]] = ..., favicon: _Optional[str] = ..., type: _Optional[str] = ..., video: _Optional[_Union[Video, _Mapping]] = ..., structured_data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., share_count: _Optional[int] = ..., first_seen: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., fetched_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., content_ref: _Optional[str] = ..., final_url: _Optional[str] = ..., error: _Optional[str] = ..., content_length: _Optional[int] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., etag: _Optional[str] = ..., last_modified: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., robots_directives: _Optional[_Iterable[str]] = ..., clean_url: _Optional[str] = ..., removed_params: _Optional[_Iterable[str]] = ..., sensitive: _Optional[bool] = ..., embed_html: _Optional[str] = ..., fediverse_creator: _Optional[str] = ..., provenance: _Optional[_Iterable[_Union[FieldSource, _Mapping]]] = ..., fetch_mode: _Optional[str] = ..., truncated: _Optional[bool] = ..., modified_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., medium: _Optional[str] = ..., images: _Optional[_Iterable[_Union[Image, _Mapping]]] = ..., logo: _Optional[_Union[Image, _Mapping]] = ..., theme_color: _Optional[str] = ..., theme_color_dark: _Optional[str] = ..., card_style: _Optional[str] = ..., labels: _Optional[_Iterable[_Union[Label, _Mapping]]] = ..., offer: _Optional[_Union[Offer, _Mapping]] = ..., word_count: _Optional[int] = ..., reading_time_s: _Optional[int] = ..., audio: _Optional[_Union[Audio, _Mapping]] = ..., document: _Optional[_Union[Document, _Mapping]] = ..., file_size: _Optional[int] = ..., honesty: _Optional[_Union[Honesty, _Mapping]] = ...) -> None: ...

class Honesty(_message.Message):
    __slots__ = ("verdict", "differences", "browser_final_url", "checked_at")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    DIFFERENCES_FIELD_NUMBER: _ClassVar[int]
    BROWSER_FINAL_URL_FIELD_NUMBER: _ClassVar[int]
    CHECKED_AT_FIELD_NUMBER: _ClassVar[int]
    verdict: str
    differences: _containers.RepeatedScalarFieldContainer[str]
    browser_final_url: str
    checked_at: _timestamp_pb2.Timestamp
    def __init__(self, verdict: _Optional[str] = ..., differences: _Optional[_Iterable[str]] = ..., browser_final_url: _Optional[str] = ..., checked_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class FieldSource(_message.Message):
    __slots__ = ("field", "source", "rejected")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    field: str
    source: str
    rejected: _containers.RepeatedCompositeFieldContainer[Candidate]
    def __init__(self, field: _Optional[str] = ..., source: _Optional[str] = ..., rejected: _Optional[_Iterable[_Union[Candidate, _Mapping]]] = ...) -> None: ...

class Candidate(_message.Message):
    __slots__ = ("source", "value", "reason")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    source: str
    value: str
    reason: str
    def __init__(self, source: _Optional[str] = ..., value: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class Finding(_message.Message):
    __slots__ = ("platform", "code", "severity", "field", "message")
    PLATFORM_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    platform: str
    code: str
    severity: str
    field: str
    message: str
    def __init__(self, platform: _Optional[str] = ..., code: _Optional[str] = ..., severity: _Optional[str] = ..., field: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class ExplainUrlRequest(_message.Message):
    __slots__ = ("url",)
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class Explanation(_message.Message):
    __slots__ = ("metadata", "fields", "findings", "note")
    METADATA_FIELD_NUMBER: _ClassVar[int]
    FIELDS_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    metadata: UrlMetadata
    fields: _containers.RepeatedCompositeFieldContainer[FieldSource]
    findings: _containers.RepeatedCompositeFieldContainer[Finding]
    note: str
    def __init__(self, metadata: _Optional[_Union[UrlMetadata, _Mapping]] = ..., fields: _Optional[_Iterable[_Union[FieldSource, _Mapping]]] = ..., findings: _Optional[_Iterable[_Union[Finding, _Mapping]]] = ..., note: _Optional[str] = ...) -> None: ...

class GetUrlMetadataRequest(_message.Message):
    __slots__ = ("urls",)
    URLS_FIELD_NUMBER: _ClassVar[int]
    urls: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, urls: _Optional[_Iterable[str]] = ...) -> None: ...

class UrlMetadataResult(_message.Message):
    __slots__ = ("url", "found", "metadata", "pending")
    URL_FIELD_NUMBER: _ClassVar[int]
    FOUND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    url: str
    found: bool
    metadata: UrlMetadata
    pending: bool
    def __init__(self, url: _Optional[str] = ..., found: _Optional[bool] = ..., metadata: _Optional[_Union[UrlMetadata, _Mapping]] = ..., pending: _Optional[bool] = ...) -> None: ...

class GetUrlMetadataResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[UrlMetadataResult]
    def __init__(self, results: _Optional[_Iterable[_Union[UrlMetadataResult, _Mapping]]] = ...) -> None: ...

class ResolveUrlRequest(_message.Message):
    __slots__ = ("url", "max_age", "refresh")
    URL_FIELD_NUMBER: _ClassVar[int]
    MAX_AGE_FIELD_NUMBER: _ClassVar[int]
    REFRESH_FIELD_NUMBER: _ClassVar[int]
    url: str
    max_age: _duration_pb2.Duration
    refresh: bool
    def __init__(self, url: _Optional[str] = ..., max_age: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., refresh: _Optional[bool] = ...) -> None: ...

class ForgetRequest(_message.Message):
    __slots__ = ("urls", "domain", "reason")
    URLS_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    urls: _containers.RepeatedScalarFieldContainer[str]
    domain: str
    reason: str
    def __init__(self, urls: _Optional[_Iterable[str]] = ..., domain: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ForgetResponse(_message.Message):
    __slots__ = ("records", "content_records", "events")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    CONTENT_RECORDS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    records: int
    content_records: int
    events: int
    def __init__(self, records: _Optional[int] = ..., content_records: _Optional[int] = ..., events: _Optional[int] = ...) -> None: ...

class ListForgottenRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ForgottenEntry(_message.Message):
    __slots__ = ("url", "domain", "reason", "by", "forgotten_at")
    URL_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    BY_FIELD_NUMBER: _ClassVar[int]
    FORGOTTEN_AT_FIELD_NUMBER: _ClassVar[int]
    url: str
    domain: str
    reason: str
    by: str
    forgotten_at: _timestamp_pb2.Timestamp
    def __init__(self, url: _Optional[str] = ..., domain: _Optional[str] = ..., reason: _Optional[str] = ..., by: _Optional[str] = ..., forgotten_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListForgottenResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[ForgottenEntry]
    def __init__(self, entries: _Optional[_Iterable[_Union[ForgottenEntry, _Mapping]]] = ...) -> None: ...

class UnforgetRequest(_message.Message):
    __slots__ = ("urls", "domain")
    URLS_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    urls: _containers.RepeatedScalarFieldContainer[str]
    domain: str
    def __init__(self, urls: _Optional[_Iterable[str]] = ..., domain: _Optional[str] = ...) -> None: ...

class UnforgetResponse(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: int
    def __init__(self, entries: _Optional[int] = ...) -> None: ...
