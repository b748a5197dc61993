"""Inspector actions: the core's (:mod:`kent_ops.core.inspector_actions`), used here.

The payloads, their checks, how an action is described and how it is found recorded
are shared with the inspector's page in a browser, so they live in the core; this
module only names them for the dashboard's own modules and tests.
"""

from __future__ import annotations

from kent_ops.core.inspector_actions import (
    CLERK_PERMIT,
    INSPECTION_RESULTS,
    RECORDED_IN,
    ActionPayload,
    ActionState,
    SentAction,
    ack_payload,
    action_topic,
    adjust_payload,
    describe,
    encode_action,
    inspection_payload,
    iso_utc,
    note_payload,
    permit_payload,
    recorded_entries,
    restamped,
    update_recorded,
)

__all__ = [
    "CLERK_PERMIT",
    "INSPECTION_RESULTS",
    "RECORDED_IN",
    "ActionPayload",
    "ActionState",
    "SentAction",
    "ack_payload",
    "action_topic",
    "adjust_payload",
    "describe",
    "encode_action",
    "inspection_payload",
    "iso_utc",
    "note_payload",
    "permit_payload",
    "recorded_entries",
    "restamped",
    "update_recorded",
]
