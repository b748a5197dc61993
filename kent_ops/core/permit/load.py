"""The permit file: one permitted assembly and the sensors installed for it.

Loading validates everything and reports every problem at once, as
``field: what is wrong (cite)``, because an organiser fixing a permit file should not
have to run the checker once per mistake. A permit may be stricter than the ordinance,
never looser. The fields are declared in :mod:`kent_ops.core.permit.schema`; the checks
that join fields are in :mod:`kent_ops.core.permit.checks`; the records it builds are
in :mod:`kent_ops.core.permit.model` (the package's face names them all).
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from kent_ops.core.declared import Reader
from kent_ops.core.permit import checks, places, schema
from kent_ops.core.permit.model import Permit, PermitError

__all__ = ["load_permit", "parse_permit"]


def load_permit(path: str | Path) -> Permit:
    """Load and validate a permit file; raise :class:`PermitError` listing every problem."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise PermitError.unreadable(str(path), "no such file") from None
    except IsADirectoryError:
        raise PermitError.unreadable(str(path), "is a folder, not a file") from None
    except PermissionError:
        raise PermitError.unreadable(str(path), "cannot be read (permission denied)") from None
    except UnicodeDecodeError:
        raise PermitError.unreadable(str(path), "is not UTF-8 text") from None
    return parse_permit(text, source=path)


def parse_permit(text: str, source: Path | str | None = None) -> Permit:
    """Validate the TOML text of a permit; raise :class:`PermitError` listing every problem."""
    label = str(source) if source is not None else "permit"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PermitError([f"TOML syntax: {exc}"], label) from None
    r = Reader(data)
    r.unknown_tables(schema.KNOWN_TABLES)
    attrs: dict[str, Any] = checks.read_event(r)
    values = {spec.name: r.read(spec) for spec in schema.DIRECT_TABLES}
    for spec in schema.DIRECT_TABLES:
        attrs.update(schema.permit_attrs(spec, values[spec.name]))
    checks.check_issued_number(r, attrs["status"], attrs["number"])
    checks.check_revocation(r, attrs["revoked_at"])
    attrs["agent"] = checks.read_agent(r, values["applicant"]["agent"])
    attrs["application"], attrs["application_on_record"] = checks.read_application(r)
    attrs["properties"], property_ids = places.read_properties(r, attrs["inspection_authorized"])
    attrs["windows"] = checks.read_windows(r)
    checks.check_limits(r, attrs["max_at_one_time"], attrs["max_collective"])
    attrs.update(places.read_sensors(r, property_ids))
    attrs["alerting"] = checks.read_alerting(r, attrs["max_at_one_time"])
    attrs["signing_keys_file"] = checks.read_signing(r, source)
    if r.problems:
        raise PermitError(r.problems, label)
    return Permit(**attrs, source_path=source if isinstance(source, Path) else None, raw=data)
