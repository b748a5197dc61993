"""A simulated day, from a scenario file: what ``kent-ops simulate`` and the demo play.

This is the package's face: what the rest may use of the scenarios. A scenario is data
(the built-in ``festival``, ``quiet`` and ``faults`` in ``builtin/``; any file in the same
format, :mod:`.file` reads and checks it into the records of :mod:`.model`);
:mod:`.schedule` cuts the run into steps, :mod:`.crowd` works out the persons through
each gate and the cars in each lot, :mod:`.events` the staff's shifts and the faults, and
:mod:`.day` turns all of it into the messages of the day, in order.
"""

from __future__ import annotations

from sensors.scenario.day import SimMessage, Timeline, generate, timeline
from sensors.scenario.file import load_scenario, parse_scenario
from sensors.scenario.model import BUILTIN_SCENARIOS, Scenario, ScenarioError

__all__ = [
    "BUILTIN_SCENARIOS",
    "Scenario",
    "ScenarioError",
    "SimMessage",
    "Timeline",
    "generate",
    "load_scenario",
    "parse_scenario",
    "timeline",
]
