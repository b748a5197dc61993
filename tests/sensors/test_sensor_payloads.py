"""The bytes on the wire: timestamps, compact JSON, and signatures the aggregator accepts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from kent_ops.core.wire import canonical_bytes, encode_payload, format_ts, sign, unsign, verify

NY = ZoneInfo("America/New_York")
KEY = bytes.fromhex("00112233445566778899aabbccddeeff")


def test_ts_has_milliseconds_and_the_event_offset() -> None:
    t = datetime(2027, 7, 4, 18, 3, 5, 120_000, tzinfo=UTC)
    assert format_ts(t, NY) == "2027-07-04T14:03:05.120-04:00"
    assert format_ts(t) == "2027-07-04T18:03:05.120+00:00"


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        format_ts(datetime(2027, 7, 4, 12, 0))  # noqa: DTZ001


def test_unsigned_payload_is_compact_json_in_written_order() -> None:
    fields = {"seq": 17, "ts": "2027-07-04T14:03:05.120-04:00", "in_total": 1234, "out_total": 87}
    assert encode_payload(fields) == (
        b'{"seq":17,"ts":"2027-07-04T14:03:05.120-04:00","in_total":1234,"out_total":87}'
    )


def test_signature_is_last_and_covers_the_payload_without_it() -> None:
    fields = {"seq": 1, "ts": "2027-07-04T10:00:00.000-04:00", "badge": "RN-0042"}
    payload = encode_payload(fields, KEY)
    decoded = json.loads(payload)
    assert list(decoded) == ["seq", "ts", "badge", "sig"]
    assert decoded["sig"] == sign(fields, KEY)
    assert verify(payload, KEY)
    assert not verify(payload, b"another key of sixteen")
    # The aggregator's side cuts the trailing sig member and checks those exact bytes.
    assert unsign(payload, KEY) == canonical_bytes(fields)


def test_a_tampered_payload_does_not_verify() -> None:
    payload = encode_payload({"seq": 1, "in_total": 5}, KEY)
    assert not verify(payload.replace(b'"in_total":5', b'"in_total":6'), KEY)
    assert isinstance(unsign(payload.replace(b":5", b":6"), KEY), str)
