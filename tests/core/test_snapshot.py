"""Engine snapshots: the whole state out and back, and nothing of it forgotten.

- Every attribute of every part of the engine is either in the snapshot or rebuilt from
  the permit; an attribute added to the engine without either fails here.
- A restored engine equals the original attribute by attribute, all the way down.
- Property: any history, snapshotted at any point, restored and continued, ends with
  the same status, alerts and state as one engine fed the whole history.
- A snapshot of another program version, format, permit, clock or keys is refused.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import deque
from datetime import datetime, timedelta
from typing import Any

import msgspec
import pytest
from core_support import TIGHT, Driver, local, permit_variant
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from wire_support import clerk_permit

from kent_ops.core import snapshot as snapshots
from kent_ops.core.checklist import applicable_items
from kent_ops.core.engine import Engine
from kent_ops.core.permit import Permit
from kent_ops.core.snapshot import DERIVED, PARTS, SnapshotRefused

TIGHT_CHANGES = {**TIGHT, "alerting.pending_s": 2, "alerting.clear_s": 3}
"""The property tests' small figures, with short pending and clear delays."""
TIGHT_PERMIT = permit_variant(TIGHT_CHANGES)
"""Small figures, so a short random history crosses many thresholds and the window."""
ITEMS = [item.item for item in applicable_items(TIGHT_PERMIT)]


def busy(clock: str = "sensor", permit: Permit = TIGHT_PERMIT) -> Driver:
    """An engine with something in every part: counts, alerts pending, live and cleared,
    notes, acknowledgements, checklist marks, an adjustment, a revocation, a skewed clock."""
    d = Driver(permit, clock=clock)
    t = local(12)
    d.present(40, t)
    d.lot("lot-a", t, 3, received=t)
    d.staff(t, doctors=1, nurses=2, security=1)
    d.gate("south", t + timedelta(seconds=1), 30, 0, received=t + timedelta(seconds=95))
    d.tick(t + timedelta(seconds=10))
    d.lot("lot-a", t + timedelta(seconds=11), 0)
    d.tick(t + timedelta(seconds=30))
    d.inspector("insp-1", "note", t + timedelta(seconds=31), text="busy at the north gate")
    first = sorted(d.engine.alerts)[0]
    d.inspector("insp-1", "ack", t + timedelta(seconds=32), alert=first, comment="seen")
    d.inspector("insp-2", "inspection", t + timedelta(seconds=33), item=ITEMS[0],
                result="deficient", note="one toilet for the whole site")  # fmt: skip
    d.inspector("insp-2", "adjust", t + timedelta(seconds=34), attendance=70, reason="sweep")
    sent = t + timedelta(seconds=35)
    body = clerk_permit(sent, "revoked", t + timedelta(seconds=60), "2027-41")
    d.feed(d.topics.clerk_permit("clerk-1"), body, sent)
    d.present(75, t + timedelta(seconds=36))
    return d


# -- nothing forgotten --------------------------------------------------------------------------


def unsaved(engine: Engine) -> list[str]:
    """Attributes of the engine's parts that are neither in the snapshot nor rebuilt."""
    problems = []
    for attr, state in PARTS.items():
        obj = engine if not attr else getattr(engine, attr)
        attrs = set(vars(obj))
        saved = {a.lstrip("_") for a in attrs - DERIVED[attr]}
        fields = set(state.__struct_fields__)
        problems += [f"{attr or 'engine'}.{a} is not saved" for a in sorted(saved - fields)]
        problems += [f"{attr or 'engine'}: no attribute for {f}" for f in sorted(fields - saved)]
        problems += [f"{attr or 'engine'}.{a} is gone" for a in sorted(DERIVED[attr] - attrs)]
    return problems


def test_every_attribute_of_every_part_is_saved_or_rebuilt_from_the_permit() -> None:
    engine = busy().engine
    assert unsaved(engine) == []
    # The parts not listed are dataclasses, which msgspec writes whole, field by field, or
    # plain values (a list of named tuples: the gaps).
    parts = {attr for attr in PARTS if attr}
    for attr, value in vars(engine).items():
        if attr in parts or attr in DERIVED[""]:
            continue
        plain = value is None or isinstance(
            value, int | float | str | bool | dict | set | tuple | list
        )
        assert plain or dataclasses.is_dataclass(value), attr


def test_an_attribute_added_to_the_engine_is_caught() -> None:
    engine = busy().engine
    engine._new_figure = 3  # type: ignore[attr-defined]
    engine.alert_book.muted = set()  # type: ignore[attr-defined]
    assert unsaved(engine) == ["engine.new_figure is not saved", "alert_book.muted is not saved"]


def differences(a: Any, b: Any, path: str = "engine") -> list[str]:
    """Where two object graphs differ, attribute by attribute (order of dicts included)."""
    if a is b:
        return []
    numbers = (int, float)
    if type(a) is not type(b) and not (isinstance(a, numbers) and isinstance(b, numbers)):
        return [f"{path}: {type(a).__name__} vs {type(b).__name__}"]
    if inspect.ismethod(a):
        same = a.__func__ is b.__func__ and type(a.__self__) is type(b.__self__)
        return [] if same else [f"{path}: another method"]
    if isinstance(a, msgspec.Struct | str | bytes | int | float | bool | datetime | set):
        return [] if a == b else [f"{path}: {a!r} vs {b!r}"]
    if isinstance(a, dict):
        if list(a) != list(b):
            return [f"{path}: keys {list(a)} vs {list(b)}"]
        return [d for k in a for d in differences(a[k], b[k], f"{path}[{k!r}]")]
    if isinstance(a, list | tuple | deque):
        if path.endswith("._heap"):  # a heap's layout may differ; its order may not
            a, b = sorted(a), sorted(b)
        if len(a) != len(b) or getattr(a, "maxlen", None) != getattr(b, "maxlen", None):
            return [f"{path}: {a!r} vs {b!r}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{path}[{i}]")]  # fmt: skip
    names = _attributes(a)
    if names != _attributes(b):
        return [f"{path}: attributes {sorted(names)} vs {sorted(_attributes(b))}"]
    return [
        d for n in sorted(names) for d in differences(getattr(a, n), getattr(b, n), f"{path}.{n}")
    ]


def _attributes(obj: Any) -> set[str]:
    if hasattr(obj, "__dict__"):
        return set(vars(obj))
    return {s for cls in type(obj).__mro__ for s in getattr(cls, "__slots__", ())}


@pytest.mark.parametrize("clock", ["sensor", "wall"])
def test_a_restored_engine_equals_the_original_all_the_way_down(clock: str) -> None:
    engine = busy(clock).engine
    restored = Engine.restore(TIGHT_PERMIT, engine.snapshot(), clock)  # type: ignore[arg-type]
    assert differences(engine, restored) == []
    book = restored.alert_book
    assert book.live
    assert all(book.alerts[a.id] is a for a in book.live.values())
    assert book._schedule.__self__ is restored._deadlines  # type: ignore[attr-defined]
    assert restored.inspectors.notes.maxlen == engine.inspectors.notes.maxlen


def test_the_comparison_would_see_a_changed_figure() -> None:
    engine = busy().engine
    restored = Engine.restore(TIGHT_PERMIT, engine.snapshot(), "sensor")
    restored.alert_book.alerts["A-0001"].worst_observed = {"attendance": 1}
    restored._deadlines._heap.append((1, 1, ""))
    restored.inspectors.notes = deque(restored.inspectors.notes)  # the bound is lost
    found = differences(engine, restored)
    assert any(f.startswith("engine.alert_book.alerts['A-0001'].worst_observed") for f in found)
    assert any(f.startswith("engine._deadlines._heap") for f in found)
    assert any(f.startswith("engine.inspectors.notes") for f in found)


def test_taking_a_snapshot_changes_nothing_and_gives_the_same_bytes_twice() -> None:
    engine = busy().engine
    before = Engine.restore(TIGHT_PERMIT, engine.snapshot(), "sensor")
    assert engine.snapshot() == engine.snapshot()
    assert differences(engine, before) == []


# -- restore and continue equals never stopping -------------------------------------------------

steps = st.lists(
    st.tuples(
        st.integers(1, 9000).map(lambda ms: timedelta(milliseconds=ms)),
        st.one_of(
            st.tuples(
                st.just("gate"),
                st.sampled_from(["north", "south"]),
                st.integers(0, 25),
                st.integers(0, 25),
            ),
            st.tuples(st.just("restart"), st.sampled_from(["north", "south"]), st.integers(0, 5)),
            st.tuples(
                st.just("badge"),
                st.sampled_from(["doctor", "nurse", "security"]),
                st.integers(0, 3),
                st.booleans(),
            ),
            st.tuples(st.just("lot"), st.sampled_from(["lot-a", "lot-b"]), st.integers(0, 4)),
            st.tuples(
                st.just("availability"),
                st.sampled_from(["north", "lot-a", "first-aid"]),
                st.booleans(),
            ),
            st.tuples(st.just("adjust"), st.integers(0, 80)),
            st.tuples(st.just("note"), st.integers(0, 3)),
            st.tuples(st.just("ack"), st.integers(1, 4)),
            st.tuples(st.just("inspection"), st.sampled_from(ITEMS), st.booleans()),
            st.tuples(st.just("clerk"), st.booleans(), st.integers(-30, 120)),
        ),  # fmt: skip
        st.lists(st.floats(0, 1), max_size=2),
        st.sampled_from([0, 0, 0, 31, -45]),
    ),
    min_size=1,
    max_size=30,
)


class Player:
    """Feeds one history to a driver; the same step always becomes the same payload."""

    def __init__(self, clock: str) -> None:
        self.d = Driver(TIGHT_PERMIT, clock=clock)
        self.clock = clock
        self.totals = {"north": [0, 0], "south": [0, 0]}
        self.seq: dict[str, int] = {}
        self.t = local(12)
        self.d.tick(self.t)

    def step(self, gap: timedelta, action: tuple[Any, ...], ticks: list[float], skew: int) -> None:
        d = self.d
        for frac in sorted(ticks):
            d.tick(self.t + gap * frac)
        self.t += gap
        t = self.t
        ts = t + timedelta(seconds=skew) if self.clock == "wall" else t
        kind = action[0]
        if kind in ("gate", "restart"):
            gate = action[1]
            if kind == "gate":
                self.totals[gate][0] += action[2]
                self.totals[gate][1] += action[3]
                self.seq[gate] = self.seq.get(gate, 0) + 1
            else:
                self.totals[gate] = [action[2], 0]
                self.seq[gate] = 0
            d.gate(gate, ts, *self.totals[gate], seq=self.seq[gate], received=t)
        elif kind == "badge":
            d.badge(ts, f"{action[1]}-{action[2]}", action[1], "on" if action[3] else "off",
                    received=t)  # fmt: skip
        elif kind == "lot":
            d.lot(action[1], ts, action[2], received=t)
        elif kind == "availability":
            d.availability(action[1], t, "online" if action[2] else "offline")
        elif kind == "adjust":
            d.inspector("insp-1", "adjust", t, attendance=action[1], reason="sweep")
        elif kind == "note":
            d.inspector(f"insp-{action[1]}", "note", t, text=f"note {action[1]}")
        elif kind == "ack":
            d.inspector("insp-1", "ack", t, alert=f"A-{action[1]:04d}", comment="seen")
        elif kind == "inspection":
            result, note = ("ok", "") if action[2] else ("deficient", "missing")
            d.inspector("insp-2", "inspection", t, item=action[1], result=result, note=note)
        else:
            status = "revoked" if action[1] else "issued"
            body = clerk_permit(t, status, t + timedelta(seconds=action[2]), "2027-41")
            d.feed(d.topics.clerk_permit("clerk-1"), body, t)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["sensor", "wall"]), steps, st.data())
def test_a_restored_engine_goes_on_exactly_as_one_that_never_stopped(
    clock: str, history: list[Any], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(history)), label="snapshot before step")
    collect = data.draw(st.booleans(), label="changes collected at the snapshot")
    whole, part = Player(clock), Player(clock)
    for i, step in enumerate(history):
        if i == cut:
            if collect:  # as the live service does, just before it writes a snapshot
                whole.d.engine.collect_changes()
                part.d.engine.collect_changes()
            saved = part.d.engine.snapshot()
            part.d.engine = Engine.restore(TIGHT_PERMIT, saved, clock)  # type: ignore[arg-type]
            assert snapshots.differences(whole.d.engine, saved) == []
        whole.step(*step)
        part.step(*step)
    end = whole.t + timedelta(seconds=60)
    whole.d.tick(end)
    part.d.tick(end)
    event(f"alerts: {min(len(whole.d.engine.alerts), 3)}; cut at {min(cut, 3)}")
    assert part.d.status() == whole.d.status()
    assert part.d.engine.alerts == whole.d.engine.alerts
    assert part.d.engine.collect_changes() == whole.d.engine.collect_changes()
    assert snapshots.differences(whole.d.engine, part.d.engine.snapshot()) == []


# -- refused: another program, format, permit, clock or keys -------------------------------------


def _with_header(data: bytes, **changes: Any) -> bytes:
    doc = msgspec.json.decode(data)
    doc.update(changes)
    return msgspec.json.encode(doc)


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"version": "0.0.9"}, "written by kent-ops 0.0.9"),
        ({"program": "other-ops"}, "written by other-ops"),
        ({"format": snapshots.FORMAT + 1}, "snapshot format"),
        ({"clock": "wall"}, "wall clock"),
        ({"permit": "0" * 64}, "another permit"),
        ({"keys": "0" * 64}, "other signing keys"),
    ],
)
def test_a_snapshot_of_another_program_or_setting_is_refused(
    change: dict[str, Any], words: str
) -> None:
    data = _with_header(busy().engine.snapshot(), **change)
    with pytest.raises(SnapshotRefused, match=words):
        Engine.restore(TIGHT_PERMIT, data, "sensor")


def test_a_snapshot_under_another_permit_or_unreadable_is_refused() -> None:
    data = busy().engine.snapshot()
    other = permit_variant({**TIGHT_CHANGES, "alerting.pending_s": 4})
    with pytest.raises(SnapshotRefused, match="another permit"):
        Engine.restore(other, data, "sensor")
    with pytest.raises(SnapshotRefused, match="other signing keys"):
        Engine.restore(TIGHT_PERMIT, data, "sensor", {"north": b"k" * 32})
    with pytest.raises(SnapshotRefused, match="not an engine snapshot"):
        Engine.restore(TIGHT_PERMIT, b"not json", "sensor")
    doc = msgspec.json.decode(data)
    doc["state"]["surprise"] = 1  # a field this program does not know
    with pytest.raises(SnapshotRefused, match="cannot be read"):
        Engine.restore(TIGHT_PERMIT, msgspec.json.encode(doc), "sensor")


def _as_format_2(data: bytes) -> bytes:
    """A snapshot as format 2 wrote it: the band's fields in the engine's own state."""
    doc = msgspec.json.decode(data)
    state = doc["state"]
    band = state.pop("band")
    state.update(
        counts_only=band["counts_only"],
        band=band["limits"],
        over_collective=band["over_collective"],
        stretch_peak=band["stretch_peak"],
        stretch_at=band["stretch_at"],
    )
    doc["format"] = 2
    return msgspec.json.encode(doc)


@pytest.mark.parametrize("earlier", [2, 3])
def test_a_snapshot_from_before_the_stretches_is_refused_and_the_log_replayed(
    earlier: int,
) -> None:
    """A log written before each alert carried its stretches: its snapshots cannot be
    carried over (the law's reading changed), so a restart or a report replays it whole."""
    engine = busy().engine
    old = (
        _as_format_2(engine.snapshot())
        if earlier == 2
        else _with_header(engine.snapshot(), format=3)
    )
    assert snapshots.read_header(old).format == earlier
    with pytest.raises(SnapshotRefused, match="earlier reading of the law"):
        Engine.restore(TIGHT_PERMIT, old, "sensor")
    with pytest.raises(SnapshotRefused, match="snapshot format 1"):
        Engine.restore(TIGHT_PERMIT, _with_header(old, format=1), "sensor")


def test_the_header_says_who_wrote_it_and_carries_the_services_own_figures() -> None:
    data = busy().engine.snapshot({"storage_alerts": 2})
    header = snapshots.read_header(data)
    assert (header.format, header.program, header.clock) == (snapshots.FORMAT, "kent-ops", "sensor")
    assert header.service == {"storage_alerts": 2}
    assert header.permit == snapshots.permit_fingerprint(TIGHT_PERMIT)


def test_differences_name_the_figures_that_differ() -> None:
    d = busy()
    data = d.engine.snapshot()
    assert snapshots.differences(d.engine, data) == []
    d.present(20, local(12, 1))
    found = snapshots.differences(d.engine, data)
    assert found
    assert any("counts" in f and "by the engine" in f and "in the snapshot" in f for f in found)
