"""The facilities checklist (permit:C, D, F): what inspectors check on site that no sensor sees.

One item per lettered or numbered requirement of permit:C, plus access for inspection
(permit:D) and clean-up (permit:F), each with its citation and one plain line an
inspector on a muddy field understands at a glance. An item marked ``deficient`` holds
the breach ``facility-deficient`` until it is marked ``ok`` or ``n/a``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kent_ops.core.permit import Permit

__all__ = ["CHECKLIST", "ChecklistItem", "applicable_items", "item_cite"]


@dataclass(frozen=True, slots=True)
class ChecklistItem:
    """One requirement an inspector can mark ``ok``, ``deficient`` or ``n/a``."""

    item: str  # as published on the inspection topic, e.g. "C(1)(h)"
    paragraph: str  # the group it is shown under, e.g. "C(1) Drinking water"
    text: str
    applies_when: str = "always"  # always | overnight

    @property
    def cite(self) -> str:
        return item_cite(self.item)


def item_cite(item: str) -> str:
    """The citation of a checklist item, e.g. ``permit:C(1)(h)``."""
    return f"permit:{item}"


_WATER = "C(1) Drinking water"
_TOILETS = "C(2) Toilets"
CHECKLIST: tuple[ChecklistItem, ...] = (
    ChecklistItem("C(1)(a)", _WATER, "Drinking water readily available to everyone attending"),
    ChecklistItem("C(1)(b)", _WATER, "Only drinking water is piped to easily reached taps"),
    ChecklistItem("C(1)(c)", _WATER, "Well, spring and storage protected against pollution"),
    ChecklistItem("C(1)(d)", _WATER, "Pipes and pumps of an acceptable type and installation"),
    ChecklistItem("C(1)(e)", _WATER, "No connection between drinking and non-drinking pipes"),
    ChecklistItem("C(1)(f)", _WATER, "No back-siphoning fixture fed from drinking-water pipes"),
    ChecklistItem("C(1)(g)", _WATER, "Drinking-water pipes buried deep enough to be protected"),
    ChecklistItem("C(1)(h)", _WATER, "No common drinking cup provided or in use"),
    ChecklistItem("C(1)(i)", _WATER, "Drinking fountains of approved sanitary design"),
    ChecklistItem("C(1)(j)", _WATER, "Water treatment logged daily; no unapproved changes"),
    ChecklistItem("C(2)(a)", _TOILETS, "Toilets conveniently located, clean, not offensive"),
    ChecklistItem("C(2)(b)", _TOILETS, "Separate toilet facilities for each sex"),
    ChecklistItem("C(2)(c)", _TOILETS, "No privy can leak into water; vaults closed to flies"),
    ChecklistItem("C(3)", "C(3) Sewage", "Sewage disposal meets State and County standards"),
    ChecklistItem(
        "C(5)",
        "C(5) Food",
        "Food stored and handled safely; dish washing and disinfecting on site",
    ),
    ChecklistItem("C(6)", "C(6) Parking", "Off-road parking for at least one car per four persons"),
    ChecklistItem(
        "C(7)",
        "C(7) Housing",
        "Housing for everyone staying from one day into the next",
        applies_when="overnight",
    ),
    ChecklistItem("C(8)", "C(8) Access roads", "Enough access roads to and from the site, open"),
    ChecklistItem("C(9)", "C(9) Medical", "First-aid station staffed; a doctor and nurses on duty"),
    ChecklistItem("D", "D Inspection", "Inspectors allowed onto the property at any time"),
    ChecklistItem("F", "F Clean-up", "Trash and waste completely removed from the premises"),
)
"""Every checklist item, in the order of the ordinance."""

BY_ITEM: dict[str, ChecklistItem] = {i.item: i for i in CHECKLIST}


def applicable_items(permit: Permit) -> tuple[ChecklistItem, ...]:
    """The items that apply to this permit: every one, and housing when it may run overnight.

    Housing (permit:C(7)) applies "if it is contemplated that the assembly ... shall
    extend from one day to another": declared overnight or a window crossing a local
    midnight. Food (permit:C(5)) applies to every assembly: its first sentence has no
    condition.
    """
    return tuple(
        it for it in CHECKLIST if it.applies_when != "overnight" or permit.may_run_overnight
    )
