"""The law's own words for every citation the report uses, so no cite goes unexplained.

A Board member who reads ``permit:C(9)`` beside a finding should not need the chapter at
hand: the page ends with a legend that quotes, for each provision it cites, a short
excerpt of the published text ("Assemblies, Mass", L.L. No. 3-1971), word for word;
"…" marks words left out. The excerpts are the ones docs/law.md quotes (a test keeps
them equal). :func:`cites_in` finds the citations a text uses, ranges such as
``permit:B(1)-(14)`` included, in the order of the law.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["EXCERPTS", "Excerpt", "cites_in"]


@dataclass(frozen=True, slots=True)
class Excerpt:
    """One provision: how the report cites it, what it is about, and its words."""

    cite: str
    about: str
    words: str


def _e(cite: str, about: str, words: str) -> Excerpt:
    return Excerpt(cite, about, words)


_LIST = (
    _e("permit:A", "a permit for more than 500",
       "No person shall use, allow, let or permit to be used property for the assembly of "
       "persons in excess of 500 … for any part or portion of such assembly of persons, which "
       "total assembly in the aggregate is in excess of 500 persons, unless upon written permit "
       "authorizing such use and assembly issued by the Town Board through its Clerk."),
    _e("permit:B", "the application and the Board's procedure",
       "… filed with the Town Clerk at least 60 days prior to the date upon which such use and "
       "assembly shall occur … The Town Board shall act upon the application within 30 days "
       "after its submission, after a public hearing pursuant to notice published at least "
       "once in the official newspaper 10 days prior to such hearing."),
    _e("permit:B(1)", "the applicant, and an agent for a non-resident",
       "A statement of the name, age and residence address of the applicant … if the "
       "applicant does not reside within the Town of Kent, the name and address of an agent, "
       "who shall be a natural person and who shall reside in or have a place of business in "
       "the County of Putnam …"),
    _e("permit:B(2)", "owner, dates and hours, expected persons and vehicles",
       "… the proposed dates and hours of such assembly and use; the expected maximum number of "
       "persons intended to use the property at one time and collectively; the expected "
       "number of automobiles and vehicles intended to use the property at one time and "
       "collectively …"),
    _e("permit:B(3)", "site map",
       "A map prepared by a licensed land surveyor or licensed public engineer …"),
    _e("permit:B(4)", "facilities plan",
       "A plan or drawing, to scale, prepared by a licensed public engineer or licensed land "
       "surveyor …"),
    _e("permit:B(5)", "parking plan",
       "A plan, drawn to scale, showing the layout of any parking area for motor vehicles …"),
    _e("permit:B(6)", "sound equipment",
       "A statement containing the type, number and location of any radar device, sound "
       "amplifier or loudspeaker, sound truck or other similar sound equipment."),
    _e("permit:B(7)", "food and beverage",
       "A statement specifying whether food or beverage is intended to be prepared, served or "
       "distributed."),
    _e("permit:B(8)", "security",
       "A statement specifying whether any private security guards or police will be engaged …"),
    _e("permit:B(10)", "lights and signs",
       "A statement specifying whether any outdoor lights or signs are to be utilized …"),
    _e("permit:B(11)", "emergency treatment",
       "A statement specifying the facilities to be available for emergency treatment of any "
       "person who may require medical or nursing attention."),
    _e("permit:B(12)", "camping and housing",
       "A statement specifying whether any camping or housing facilities are to be available …"),
    _e("permit:B(13)", "duration",
       "A statement specifying the contemplated duration of the assembly and use."),
    _e("permit:B(14)", "overnight housing statement",
       "If the assembly and use are to continue from one day into another, a statement "
       "specifying housing facilities available or to be made available on the premises."),
    _e("permit:C", "conditions of the permit",
       "No permit shall be issued unless it is clearly shown that all of the following are "
       "provided for and approved in writing by the Putnam County Health Department and the "
       "Town Board of the Town of Kent …"),
    _e("permit:C(1)", "drinking water",
       "Drinking water adequate in quantity and quality satisfactory to the permit-issuing "
       "official."),
    _e("permit:C(1)(a)", "water available",
       "Drinking water shall be readily available to all persons attending the assembly or "
       "use."),
    _e("permit:C(1)(b)", "only drinking water piped",
       "Only drinking water shall be so delivered or piped as to be easily accessible."),
    _e("permit:C(1)(c)", "sources protected",
       "A well or spring used as a source of drinking water and the structure used for the "
       "storage of drinking water shall be so constructed and located as to protect the "
       "contents against pollution."),
    _e("permit:C(1)(d)", "pipes and pumps",
       "A pipe or pump delivering the drinking water shall be of the type and installation "
       "acceptable to the permit-issuing official."),
    _e("permit:C(1)(e)", "no cross-connection",
       "There shall be no physical connection between a pipe carrying drinking water and a "
       "pipe carrying water not of a quality satisfactory to the permit-issuing authority."),
    _e("permit:C(1)(f)", "no back-siphoning",
       "A fixture, installation or equipment from which backsiphonage may occur shall not be "
       "supplied water from a pipe carrying drinking water."),
    _e("permit:C(1)(g)", "pipes buried",
       "All pipes carrying drinking water shall be buried to a sufficient depth below the "
       "surface of the ground to prevent their damage or destruction."),
    _e("permit:C(1)(h)", "no common cup",
       "A common drinking container shall not be provided or allowed to be used."),
    _e("permit:C(1)(i)", "fountains",
       "Any drinking fountain shall be of approved sanitary design and construction."),
    _e("permit:C(1)(j)", "water treatment",
       "Where water treatment process is employed, an accurate and complete report of the "
       "process and operation thereof shall be maintained daily …"),
    _e("permit:C(2)", "toilets",
       "Toilet facilities adequate for the capacity of the assembly or use."),
    _e("permit:C(2)(a)", "toilets maintained",
       "Facilities shall be so located as to be conveniently available and shall be so "
       "constructed and maintained that they will not be offensive."),
    _e("permit:C(2)(b)", "separate toilets",
       "Toilet facilities for groups of people consisting of both sexes shall be so arranged "
       "that the facilities shall be separate for each sex."),
    _e("permit:C(2)(c)", "privies",
       "No privy shall be so located or constructed that it will by leakage or seepage "
       "possibly pollute a water supply …"),
    _e("permit:C(3)", "sewage",
       "Adequate facilities for the satisfactory disposal or treatment and disposal of sewage "
       "shall be maintained."),
    _e("permit:C(5)", "food",
       "Adequate supply of food, including provisions for sanitary storage, handling and "
       "protection of food and beverages until served or used."),
    _e("permit:C(6)", "parking",
       "Parking space shall be provided for at least one car for every four persons in "
       "attendance."),
    _e("permit:C(7)", "housing",
       "Adequate housing facilities for the contemplated number of people in attendance if it "
       "is contemplated that the assembly or use shall extend from one day to another."),
    _e("permit:C(8)", "access roads",
       "An adequate number of access roads to and from the site of the assembly or use."),
    _e("permit:C(9)", "doctors and nurses",
       "Adequate medical facilities, including a first-aid station. It must be shown that at "
       "least one doctor will be in attendance at all times and that at least one registered "
       "nurse for each 500 people in attendance will be on duty at all times."),
    _e("permit:D", "inspection",
       "… the owner and his tenant or lessee, if any, shall furnish the Town with written "
       "authorization to permit the Town or its lawful agents to go upon the property at any "
       "time …"),
    _e("permit:E", "insurance",
       "… limits of not less than $250,000/$500,000 for bodily injury or death, and limits of "
       "not less than $250,000 for property damage … not cancellable without 10 days' prior "
       "written notice to the Town"),
    _e("permit:F", "clean-up and bond",
       "Within five days from the date of the termination of the assembly, trash, papers, "
       "garbage and other waste material shall be completely removed from the premises … a "
       "bond shall be posted with the Town Clerk, in an amount fixed by the Town Board, to "
       "ensure said performance."),
    _e("permit:G", "revocation",
       "Any permit issued may be revoked by the Town Board through its Clerk if at any time it "
       "should be determined that the applicant has failed to provide the facilities as "
       "specified in the application or that the setting up of the facilities provided for "
       "in the application cannot be reasonably accomplished within the time or date set for "
       "the assembly or use."),
    _e("fee", "the application fee",
       "Each application shall be accompanied by a fee … at the time of its submission"),
    _e("penalties:A", "a violation is a misdemeanor",
       "… without first obtaining a written permit in accordance with the provisions of this "
       "chapter, shall be deemed to have violated this chapter and to have committed a "
       "misdemeanor against the chapter … Any person who commits or permits any act in "
       "violation of any provision of this chapter shall be deemed to have violated this "
       "chapter …"),
    _e("penalties:B", "fine or imprisonment",
       "For each violation of the provisions of this chapter, the person violating the same "
       "shall be subject to a fine of not more than $500 nor less than $100 or imprisonment "
       "not to exceed one year, or to both such fine and imprisonment."),
    _e("penalties:C", "civil action and injunction",
       "… the Town Board may maintain an action or proceeding in the name of the Town in a court "
       "of competent jurisdiction to compel compliance with, or to restrain by injunction the "
       "violation of this chapter."),
)  # fmt: skip

EXCERPTS: dict[str, Excerpt] = {e.cite: e for e in _LIST}
"""Every provision the report may cite, in the order of the law."""

_CITE = re.compile(
    r"\b(permit|penalties):([A-G])((?:\(\d+\))?)((?:\([a-j]\))?)"
    r"(?:\s*[-–…]\s*\((\d+)\))?"
)
_FEE = re.compile(r"\bfee\b", re.IGNORECASE)


def _keys(section: str, letter: str, item: str, sub: str, upto: str | None) -> list[str]:
    """The legend's keys for one citation: itself, its paragraph, and a range's items."""
    base = f"{section}:{letter}"
    keys = [base]
    if item:
        keys.append(base + item)
        if sub:
            keys.append(base + item + sub)
    if item and upto:
        first, last = int(item[1:-1]), int(upto)
        keys += [f"{base}({n})" for n in range(first, last + 1)]
    return keys


def cites_in(text: str) -> list[str]:
    """The provisions ``text`` cites that the legend quotes, in the order of the law.

    ``permit:C(1)(h)`` brings in C, C(1) and C(1)(h); ``permit:B(1)-(14)`` every item of
    B the published text has; any mention of the fee brings in ``fee``.
    """
    found: set[str] = set()
    for m in _CITE.finditer(text):
        found.update(_keys(m[1], m[2], m[3], m[4], m[5]))
    if _FEE.search(text):
        found.add("fee")
    return [cite for cite in EXCERPTS if cite in found]
