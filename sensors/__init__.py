"""The device side of kent-ops: sensor publishers and the event-day simulator.

This is a stable library API; the demo, the aggregator's tests and the benchmarks use it.

Devices (their payloads as docs/protocol.md, Sensor payloads, sets them), each also a
command, ``python -m sensors.<device> --permit P --id ID --broker URL [--state FILE]
[--heartbeat S] [--keys FILE]``, reading events from stdin:

- :class:`sensors.gate_counter.GateCounter`: ``count(entered, exited)``, ``tick()``
  (heartbeat, call every second or so), ``power_cycle()``; stdin ``in``, ``out 2``.
- :class:`sensors.lot_sensor.LotSensor`: ``set_occupied(n)``, ``arrive()``, ``leave()``,
  ``tick()``; stdin ``occupied 312``, ``+1``, ``-1``.
- :class:`sensors.badge_reader.BadgeReader`: ``scan(badge, role, action)``; stdin
  ``RN-0042 nurse on``.

All share :class:`sensors.device.Device`: ``connect(address, ca_file=…)`` (background
connection with availability ``online`` retained and last will ``offline`` retained,
QoS 1, reconnecting by itself), ``attach(link)``, ``close()``; constructor arguments
``clock`` (injectable: simulated time), ``tz``, ``key`` (HMAC signing, canonical form in
:mod:`kent_ops.core.wire.signing`), ``state_file`` (``seq`` and totals survive a reboot) and
``heartbeat_s``. With a permit whose ``[signing]`` names a keys file, the commands, the
generator and the simulator sign with each sensor's key (see :mod:`kent_ops.core.wire.signing`).
While the broker is away a gate counter or lot sensor keeps counting and
publishes its latest figures once on reconnection; a badge reader keeps its scans and
sends them in order.

Simulation, pure (no broker, no clock):

- ``sensors.scenario.day(permit, scenario, seed=1, start=None, *, duration=None,
  keys=None) -> Iterator[SimMessage]``: the messages of a simulated event in time
  order, deterministic per seed. ``scenario`` is ``"festival"``, ``"quiet"``,
  ``"faults"``, a path to a scenario TOML, or a loaded ``Scenario``. ``start`` is the
  scenario's 0:00 (default: the permit's first window opens); devices come online and
  the first staff badge on ``setup`` (15 min) before it. ``duration`` cuts the run that
  many simulated seconds after its first message.
- ``SimMessage(at, topic, payload, retain, fault)``: ``at`` is simulated, timezone-aware
  and equals the payload's ``ts`` (a duplicate repeats an earlier payload, ts and all,
  later); ``fault`` tags injected faults (``restart``,
  ``offline``, ``reconnect``, ``duplicate``, ``bad-json``, ``negative-count``,
  ``wrong-type``, ``unknown-sensor``, ``oversize``), None otherwise.
- ``sensors.scenario.timeline(permit, scenario, start=None) -> Timeline(begin, zero,
  end, span_s)``: where a run sits in time.
- ``sensors.tally.expected_totals(messages, permit) -> {"attendance", "entries",
  "exits"}``: what a correct aggregator ends with (last accepted totals per gate,
  restarts stitched). ``sensors.tally.Tally(permit)`` is the same reference tally fed
  message by message (``feed(topic, payload)``; ``attendance``, ``entries``,
  ``staff(role)``, ``cars``, ``lots``, ``online``, ``rejected``, ``restarts``), for
  checking figures at any moment of a run.
- ``sensors.scenario.file.load_scenario(name_or_path) -> Scenario`` (raises
  ``ScenarioError`` listing every problem).

Publishing:

- ``sensors.simulator.run_simulation(permit, scenario, address, *, speed, seed,
  start=None, duration=None, stop=None, ca_file=None, on_progress=None, keys=None) ->
  int``: publishes ``generate``'s messages QoS 1 over one connection, simulated time
  running ``speed`` times faster than the wall clock; returns the number acknowledged.
  ``stop`` (a ``threading.Event``) ends it early; ``on_progress(published, sim_time)``
  is called a few times a second. Raises ``kent_ops.core.errors.UsageError`` for a bad
  scenario or an unreachable broker.
- ``sensors.simulator.run_simulation(...)``: what ``kent-ops simulate`` runs.

Only the permit's automatic gates are simulated: a manual tally gate (``-manual``, or
``manual = true``) is its deputy's, and no scenario publishes on it.

Figures for the example permit (seed 1): ``festival`` is about 13,500 messages over
13 h 45 min simulated (about 13.8 min at ``--speed 60``, 10 s at 5000); ``quiet`` about
3,900 over 4 h 15 min; ``faults`` about 3,550 over 3 h 15 min.
"""

import sys as _sys

try:  # the devices need what kent-ops is installed with; say so in one sentence if not
    import msgspec as _msgspec  # noqa: F401
    import paho.mqtt.client as _paho  # noqa: F401
except ModuleNotFoundError as _missing:
    _sys.stderr.write(
        f"sensors: this Python ({_sys.executable}) lacks {_missing.name}: run the device "
        "with the Python kent-ops is installed in, e.g. .venv/bin/python -m "
        "sensors.gate_counter (./scripts/demo makes .venv)\n"
    )
    raise SystemExit(2) from None
