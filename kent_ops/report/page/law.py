"""What the law provides, what the report lists for it, and the law's words for every cite.

The report measures and records; it does not decide that anyone committed an offence
(docs/law.md, "Penalties and what the report counts"). So this section states what the
law provides for a violation, lists the distinct breaches (one line per rule and local
day, with the times it was in breach that day), says in words that this is not a count of
offences, ties each finding that is one of permit:G's two grounds to it (and no other),
and names who the law reaches. Only a finding's measured stretches are proven; each
stretch that is indeterminate, an estimate or within the rounding is listed apart with
what it rests on. No fine is totalled anywhere.
"""

from __future__ import annotations

from html import escape

from kent_ops.core import ordinance as law
from kent_ops.report.citations import EXCERPTS, cites_in
from kent_ops.report.findings import DistinctBreach, Finding, day_spans
from kent_ops.report.model import ReportData
from kent_ops.report.page.fmt import Fmt, cites, duration, table

__all__ = ["legend", "what_the_law_provides"]


def _provides() -> str:
    return (
        "<p>Each breach this report lists as proven is <b>evidence of a possible "
        "violation</b> of the chapter, for the Town Board, the prosecutor and the court to "
        "weigh; a breach listed as not proven (indeterminate, or only within the rounding) "
        "is not. The law provides:</p><ul>"
        "<li>A violation is a misdemeanour (penalties:A).</li>"
        f"<li>For each violation a court may impose a fine of ${law.FINE_MIN_USD} to "
        f"${law.FINE_MAX_USD}, or imprisonment of up to one year, or both (penalties:B).</li>"
        "<li>The Town Board may bring a civil action in the name of the Town to compel "
        "compliance, or seek an injunction to restrain the violation (penalties:C).</li>"
        "<li>The Town Board may revoke the permit through its Clerk (permit:G) on its two "
        "grounds only: the applicant has failed to provide the facilities as specified in "
        "the application, or the setting up of the facilities cannot reasonably be done "
        "within the time set for the assembly. Below, each finding that is such a ground is "
        "tied to it; no other finding is.</li></ul>"
    )


def _grounds(data: ReportData, fmt: Fmt) -> list[str]:
    """The findings that are a ground for revocation under permit:G, and only those."""
    grounds = [f for f in data.findings if f.revocation_ground]
    unproven = [f for f in data.findings if f.of_a_ground and not f.revocation_ground]
    out = ["<h3>Grounds for revocation (permit:G)</h3>"]
    if unproven:
        named = ", ".join(f"{f.id} ({f.not_proven})" for f in unproven)
        out.append(f"<p>Not tied to any ground, because not proven: {escape(named)}.</p>")
    if not grounds:
        out.append(
            "<p>No finding is a ground for revocation: no facility the application specified "
            "and the law requires was found not provided. (An assembly without a permit, the "
            "attendance and vehicle figures, the data findings and the clean-up are not "
            "grounds under permit:G: the clean-up binds after the assembly, when there is "
            "nothing left to revoke.)</p>"
        )
        return out
    rows = [
        f"<tr class='breach'><td class='id'>{escape(f.id)}"
        f"</td><td><b>{escape(f.name)}</b> <span class='muted'>({escape(f.rule)})</span>"
        f"</td><td>{cites(f.cite)}</td><td>{escape(fmt.when(f.start))}</td>"
        f"<td>{escape(_ground(f))} (proven for {escape(duration(f.proven_s))})</td></tr>"
        for f in grounds
    ]
    out.append(
        "<p>These proven findings are facilities found not provided as specified in the "
        "application: the first ground of permit:G, for the time each was proven. Where "
        "the law itself requires the "
        "facility (permit:C) the row says so; where only the application asked it, the "
        "row says that.</p>"
    )
    out.append(table(["Finding", "Rule", "Cite", "Start", "Ground"], rows))
    return out


def _ground(f: Finding) -> str:
    """How a proven finding is the first ground of permit:G, claiming no more than it is."""
    said = "the facilities were not provided as specified in the application"
    if f.rule == "application-staffing":
        return said + " (the application asked more than the law's minimum, which was met)"
    cite = next((c for c in f.cite.split(", ") if c.startswith("permit:C")), "permit:C")
    return said + f" (the law requires them: {cite})"


def _times(entry: DistinctBreach, fmt: Fmt) -> str:
    """The times a rule was in breach on one day: ``10:02:00 to 10:10:00``, one per span."""
    parts = []
    for a, b in day_spans(entry):
        start = fmt.clock(a)
        if b is None:
            stop = "still in progress when the log ends"
        elif b.astimezone(fmt.tz).date() != entry.day:
            stop = "midnight"
        else:
            stop = fmt.clock(b)
        parts.append(f"{start} to {stop}" if b != a else f"at {start}")
    return "<br>".join(escape(p) for p in parts)


def _distinct(data: ReportData, fmt: Fmt) -> list[str]:
    out = [
        "<h3>Distinct breaches, by rule and local day</h3>",
        "<p>How many violations occurred, and by whom, is for the prosecutor and the court. "
        "Below is one line for each rule breached on each local day, with the times it was "
        "in breach that day. <b>This is not a count of offences</b>, and the report puts no "
        "total on fines.</p>",
    ]
    if not data.distinct:
        out.append("<p>No breach of a live rule was proven during the assembly.</p>")
        return out
    cited = {f.rule: f.cite for f in data.findings}
    rows = [
        f"<tr class='breach'><td>{escape(fmt.date(d.day))}</td><td><b>{escape(d.name)}</b> "
        f"<span class='muted'>({escape(d.rule)})</span></td>"
        f"<td>{cites(cited.get(d.rule, ''))}</td><td>{_times(d, fmt)}</td>"
        f"<td>{', '.join(f'<span class=id>{escape(i)}</span>' for i in d.findings)}</td></tr>"
        for d in data.distinct
    ]
    out.append(table(["Day", "Rule", "Cite", "In breach (local time)", "Findings"], rows))
    return out


def _other_breaches(data: ReportData, fmt: Fmt) -> list[str]:
    """Breaches outside the live rules: before the assembly, and in its clean-up."""
    out = []
    before = [p for p in data.pre_event if p.severity == "breach"]
    if before:
        out.append("<h3>Breaches shown by the permit file before the assembly</h3><ul>")
        out += [
            f"<li><b>{escape(p.id)}</b> ({escape(p.cite)}): {escape(p.message)}</li>"
            for p in before
        ]
        out.append("</ul>")
    cu = data.clean_up
    if cu.is_breach and cu.deadline is not None:
        out.append(
            "<h3>Clean-up</h3>"
            f"<p><b>Clean-up</b> (permit:F): "
            f"{escape(cu.sentence(fmt.when, fmt.midnight_ending))}.</p>"
        )
    return out


_BASIS_WORDS = {
    "indeterminate": (
        "Indeterminate",
        "a sensor behind the figures was offline, silent or otherwise in doubt (named), so "
        "the figures may be wrong",
    ),
    "estimate": (
        "An estimate",
        "attendance rested on an inspector's adjustment (named) and the breach would not "
        "hold on the gate counts alone",
    ),
    "rounding": (
        "Within the rounding",
        "the staff or spaces met the exact ratio (one for each whole 500 persons, or four); "
        "the breach holds only by kent-ops' reading of a part of 500 (or four) as needing "
        "one more (docs/law.md, \u201cRounding up\u201d)",
    ),
}


def _apart(data: ReportData, fmt: Fmt) -> list[str]:
    """Every stretch of a breach that is not proven, with what it rests on."""
    rows = []
    bases: set[str] = set()
    for f in data.findings:
        if not f.is_breach:
            continue
        for x in f.apart:
            bases.add(x.basis)
            word = _BASIS_WORDS.get(x.basis, (x.basis, ""))[0]
            until = fmt.when(x.end) if x.end is not None else "still in progress when the log ends"
            rests = "; ".join(x.rests_on) or "\u2014"
            rows.append(
                f"<tr class='uncertain'><td class='id'>{escape(f.id)}</td><td><b>"
                f"{escape(f.name)}</b> <span class='muted'>({escape(f.rule)})</span></td>"
                f"<td>{escape(word)}</td><td>{escape(fmt.when(x.start))} to {escape(until)}"
                f"</td><td>{escape(duration(x.seconds))}</td><td>{escape(rests)}</td></tr>"
            )
    if not rows:
        return []
    why = "".join(
        f"<li><b>{escape(_BASIS_WORDS[b][0])}</b>: {escape(_BASIS_WORDS[b][1])}.</li>"
        for b in ("indeterminate", "estimate", "rounding")
        if b in bases
    )
    return [
        "<h3>Not proven: listed apart</h3>",
        "<p>A breach is proven only for the time its figures were measured. These stretches "
        "of breaches are not: they are kept out of the distinct breaches, the verdict and "
        "the grounds for revocation, and listed here for the Board to weigh.</p>",
        f"<ul>{why}</ul>",
        table(["Finding", "Rule", "Basis", "From (local time)", "For", "Rests on"], rows),
    ]


def _reaches(data: ReportData) -> list[str]:
    pm = data.permit
    people = [
        "<li>any person who caused the gathering of more than 500 persons without first "
        "obtaining a written permit (penalties:A);</li>",
        f"<li>the applicant, <b>{escape(pm.applicant_name)}</b>;</li>",
    ]
    for p in data.properties:
        people.append(
            f"<li><b>{escape(p.owner)}</b>, owner of {escape(p.id)} ({escape(p.address)});</li>"
        )
        if p.tenant:
            people.append(
                f"<li><b>{escape(p.tenant)}</b>, tenant or lessee of {escape(p.id)};</li>"
            )
    return [
        "<h3>Who the law reaches</h3>",
        "<p>The law reaches any person who uses, allows, lets or permits property to be used "
        "for the assembly or for any part of it (permit:A, penalties:A), any person who "
        "causes the gathering of more than 500 persons without a permit (penalties:A), and "
        "any person who commits or permits any act in violation of the chapter "
        "(penalties:A): the applicant, and each property owner, tenant or lessee who let "
        "property be used. From the permit:</p>",
        "<ul>" + "".join(people) + "</ul>",
        "<p class='muted'>The report does not say which of them is answerable for which "
        "breach: that is for the prosecutor and the court.</p>",
    ]


def what_the_law_provides(data: ReportData, fmt: Fmt) -> str:
    """The law's provisions, the distinct breaches, the indeterminate ones, who is reached."""
    out = [
        _provides(),
        *_distinct(data, fmt),
        *_other_breaches(data, fmt),
        *_apart(data, fmt),
        *_grounds(data, fmt),
        *_reaches(data),
    ]
    return "\n".join(out)


def legend(page_text: str) -> str:
    """The law's words for every provision ``page_text`` cites, in the order of the law."""
    rows = [
        f"<tr id='law-{escape(c.replace(':', '-'))}'><td class='cite'><b>{escape(c)}</b></td>"
        f"<td>{escape(EXCERPTS[c].about)}</td><td>“{escape(EXCERPTS[c].words)}”</td></tr>"
        for c in cites_in(page_text)
    ]
    lead = (
        "<p>The words of the Town of Kent “Assemblies, Mass” chapter (Local Law No. 3 of "
        "1971) for each provision this report cites, quoted as published; “…” marks words "
        "left out. A cite such as permit:C(9) names paragraph C of the permit section, "
        "item 9; penalties:B names paragraph B of the penalties section; fee, the paragraph "
        "on the application fee. A finding about the data, not the assembly, cites no "
        "provision (—).</p>"
    )
    return lead + table(["Cite", "About", "The law's words"], rows)
