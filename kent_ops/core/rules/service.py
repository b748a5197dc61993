"""The service's own findings about its evidence: raised by the aggregator, not the rule pass.

Like ``evidence-storage`` they cite no law and say how far the log can be trusted:
the broker lost (or someone took) the aggregator's session, the log was found behind a
checkpoint it had published, or the host clock jumped. docs/protocol.md ("Evidence no
insider can erase") says when each is raised and what the service does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kent_ops.core.rules.base import Rule

__all__ = ["BrokerSession", "ClockJump", "EvidenceRollback"]


class BrokerSession(Rule):
    """The broker had no session for the aggregator where it should have had one, or keeps
    closing its connection (another client using its session)."""

    name = "broker-session"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Aggregator's broker session lost"
    summary = (
        "The broker lost or handed over the aggregator's session: readings it acknowledged "
        "meanwhile may be missing from the evidence log."
    )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if o.get("cause") == "disconnects":
            return (
                f"the broker closed the aggregator's connection {o['count']} times within "
                f"{o['within_s']:.0f} s: another client may be using its session (a second "
                "kent-ops run, or a leaked session id); readings may be missing"
            )
        if o.get("changed_id"):
            return (
                "the aggregator's broker session is new because its session id changed (a new "
                "broker password or session key, or an upgrade of kent-ops): readings queued "
                "for the old session while it was away are not in the evidence log"
            )
        return (
            "the broker had no session for the aggregator although it had one before: readings "
            "the broker acknowledged while the aggregator was away may be missing (the session "
            "was wiped or taken, or the broker lost its data)"
        )


class EvidenceRollback(Rule):
    """The log is behind a checkpoint the service published, or behind its own head file."""

    name = "evidence-rollback"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Evidence log rolled back"
    summary = (
        "The evidence log holds fewer records than a checkpoint it published, or differs "
        "from it: committed records are missing."
    )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        source = o.get("source", "a checkpoint")
        went_on = (
            "the operator went on with it (--accept-rollback)"
            if o.get("accepted")
            else "the service stopped"
        )
        records, named = o.get("records", 0), r.get("record", 0)
        if records < named:
            return (
                f"the evidence log holds {records:,} records but {source} named record "
                f"{named:,}: committed records are missing; {went_on}"
            )
        return (
            f"record {named:,} of the evidence log is not the one {source} named: the log was "
            f"replaced or rewritten; {went_on}"
        )


class ClockJump(Rule):
    """The host's wall clock moved against the service's steady clock."""

    name = "clock-jump"
    severity = "data"
    cite = "—"
    binds_any_assembly = True
    title = "Host clock jumped"
    summary = (
        "The aggregator's host clock jumped; receive times keep the service's steady clock, "
        "so every rule keeps time."
    )

    def sentence(self, subject: str | None, o: Mapping[str, Any], r: Mapping[str, Any]) -> str:
        if o.get("agrees"):
            return "the host clock agrees with the service's steady clock again"
        return (
            f"the host clock jumped {o['jump_s']:+,.0f} s against the service's steady clock; "
            "receive times keep the steady clock so every rule keeps time; set the host clock "
            "right (NTP)"
        )
