"""The page's template: a section it has no place for is an error, never a silent gap."""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

import pytest
from report_support import ScriptedLog, utc, write_permit

from kent_ops.report import page
from kent_ops.report.build import build_report
from kent_ops.report.page import MissingPlaceholder, css_string, fill, render_page


def test_a_section_without_its_placeholder_in_page_html_is_an_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    permit = write_permit(tmp_path)
    evidence = tmp_path / "evidence.sqlite"
    log = ScriptedLog(evidence, permit, utc(2027, 7, 4, 14, 0))
    log.gate("north", 0, 10)
    log.close(60)
    data = build_report(permit, evidence, tmp_path / "report").data
    shipped = page._template().template
    assert "$checklist" in shipped
    assert "<h3>Every item and its marks</h3>" in render_page(data)
    without = Template(shipped.replace("$checklist", ""))
    monkeypatch.setattr(page, "_template", lambda: without)
    with pytest.raises(MissingPlaceholder, match=r"page.html has no \$checklist"):
        render_page(data)


def test_every_value_goes_to_its_place_and_a_place_without_a_value_is_an_error() -> None:
    template = Template("<h1>$title</h1>$body")
    assert fill(template, {"title": "T", "body": "B"}) == "<h1>T</h1>B"
    with pytest.raises(MissingPlaceholder, match=r"\$extra, \$more"):
        fill(template, {"title": "T", "body": "B", "extra": "X", "more": "M"})
    with pytest.raises(KeyError, match="body"):
        fill(template, {"title": "T"})


def test_the_printed_header_is_a_css_string_nothing_in_the_name_can_end() -> None:
    name = 'Kent "Fest" </style><script>x</script> · permit MG-1'
    said = css_string(name)
    assert said.startswith('"')
    assert said.endswith('"')
    inner = said[1:-1]
    assert not set(inner) & set("\"<>/'\n") - {"\\"}
    # CSS reads each escape (six hex digits and the one space that ends it) back as its
    # character: the header prints the name as written.
    assert re.sub(r"\\([0-9a-f]{6}) ", lambda m: chr(int(m[1], 16)), inner) == name
