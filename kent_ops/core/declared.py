"""Reading a TOML permit through declared fields, collecting every problem as it goes.

The declarations themselves (which tables, which fields, which section of the law
each rests on) are in :mod:`kent_ops.core.permit.schema`; this is the small machine
that reads them: a type check, a named validator, a default, and a problem
``field: what is wrong (cite)`` for each that fails.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

__all__ = [
    "ABSENT",
    "REQUIRED",
    "FieldSpec",
    "ListSpec",
    "Reader",
    "TableSpec",
    "non_negative",
    "suggestion",
]

REQUIRED: Any = object()
"""A field's default when it must be given."""
ABSENT: Any = object()
"""A field's default when its value is derived from others if it is not given."""

Check = Callable[[Any], str | None]
"""A named validator: None if the value is good, else what is wrong with it."""


def non_negative(value: int | float) -> str | None:
    """The validator of counts and amounts (here, as the sensor kinds' fields use it too)."""
    return "must not be negative" if value < 0 else None


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One key of a table: its type, its default (or REQUIRED), its citation and check."""

    key: str
    kind: type | tuple[type, ...]
    default: Any = REQUIRED
    cite: str | None = None
    check: Check | None = None
    attr: str | None = None
    """The :class:`Permit` attribute it fills when not its table's prefix + key; "" for none."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One ``[table]`` of the permit file."""

    name: str
    fields: tuple[FieldSpec, ...]
    required: bool = True
    prefix: str | None = None
    """Its fields fill :class:`Permit` attributes named prefix + key; None: read apart."""


@dataclass(frozen=True, slots=True)
class ListSpec:
    """One ``[[list]]`` of tables: windows, gates, lots, staff stations."""

    name: str
    fields: tuple[FieldSpec, ...]
    shape: str
    """What each entry must hold, for the message when one is not a table."""
    empty: str | None = None
    """The message when the list is empty or absent; None when it may be."""
    empty_cite: str | None = None


def suggestion(word: str, known: Sequence[str]) -> str:
    """`` (did you mean X?)`` for the closest known name, or nothing when none is close."""
    close = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


# -- reading -------------------------------------------------------------------------------------


def _bracketed(name: str, spec: TableSpec | ListSpec) -> str:
    return f"[[{name}]]" if isinstance(spec, ListSpec) else f"[{name}]"


def type_name(kind: type) -> str:
    return {
        str: "a string",
        int: "a whole number",
        float: "a number",
        bool: "true or false",
        date: "a date (YYYY-MM-DD)",
        datetime: "a date-time with an offset",
        dict: "a table",
        list: "a list",
    }.get(kind, kind.__name__)


def describe(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, datetime):
        return f"date-time {value.isoformat()}"
    if isinstance(value, date):
        return f"date {value.isoformat()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, int | float):
        return f"number {value}"
    return type(value).__name__


def _is_kind(value: Any, kinds: tuple[type, ...]) -> bool:
    if not isinstance(value, kinds):
        return False
    if isinstance(value, bool) and bool not in kinds:
        return False
    # a datetime is a date subclass; a date field wants a bare date
    return not (isinstance(value, datetime) and datetime not in kinds)


class Reader:
    """Reads declared fields out of the TOML tables and collects every problem."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.problems: list[str] = []

    def problem(self, name: str, what: str, cite: str | None = None) -> None:
        self.problems.append(f"{name}: {what}" + (f" ({cite})" if cite else ""))

    def unknown_tables(self, known: Mapping[str, TableSpec | ListSpec]) -> None:
        """Name every top-level table or key the file should not hold, and the one meant."""
        for key, value in self.data.items():
            if key in known:
                continue
            close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
            hint = ""
            if close:
                meant = close[0]
                hint = f" (did you mean {_bracketed(meant, known[meant])}?)"
            if isinstance(value, dict | list):
                label = f"[[{key}]]" if isinstance(value, list) else f"[{key}]"
                self.problem(label, "unknown table" + hint)
            else:
                self.problem(key, "unknown field" + hint)

    def table(self, name: str, required: bool = True) -> dict[str, Any]:
        value = self.data.get(name)
        if value is None:
            if required:
                self.problem(f"[{name}]", "missing table")
            return {}
        if not isinstance(value, dict):
            self.problem(f"[{name}]", "must be a table")
            return {}
        return value

    def field(self, table: dict[str, Any], path: str, spec: FieldSpec) -> Any:
        """One field's value, its default if absent, or None (and a problem) if bad."""
        if spec.key not in table:
            if spec.default is REQUIRED:
                self.problem(path, "missing", spec.cite)
                return None
            return spec.default
        value = table[spec.key]
        kinds = spec.kind if isinstance(spec.kind, tuple) else (spec.kind,)
        if not _is_kind(value, kinds):
            names = " or ".join(type_name(k) for k in kinds)
            self.problem(path, f"must be {names}, not {describe(value)}", spec.cite)
            return None
        if spec.check is not None:
            msg = spec.check(value)
            if msg:
                self.problem(path, msg, spec.cite)
                return None
        return value

    def fields(
        self, table: dict[str, Any], prefix: str, specs: Sequence[FieldSpec]
    ) -> dict[str, Any]:
        """Every declared field of ``table``, keyed by its key; an undeclared key is named."""
        known = [s.key for s in specs]
        for key in table:
            if key not in known:
                self.problem(f"{prefix}.{key}", "unknown field" + suggestion(key, known))
        return {s.key: self.field(table, f"{prefix}.{s.key}", s) for s in specs}

    def read(self, spec: TableSpec) -> dict[str, Any]:
        """A whole ``[table]``: every declared field, keyed by its key."""
        return self.fields(self.table(spec.name, spec.required), spec.name, spec.fields)

    def read_list(self, spec: ListSpec) -> list[tuple[int, dict[str, Any]]]:
        """Every entry of a ``[[list]]`` that is a table: its index and its fields."""
        raw = self.data.get(spec.name, [])
        if not isinstance(raw, list):
            self.problem(f"[[{spec.name}]]", "must be a list of tables")
            return []
        if spec.empty and not raw:
            self.problem(f"[[{spec.name}]]", spec.empty, spec.empty_cite)
        out = []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                self.problem(f"{spec.name}[{i}]", f"must be a table with {spec.shape}")
                continue
            out.append((i, self.fields(item, f"{spec.name}[{i}]", spec.fields)))
        return out
