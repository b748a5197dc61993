"""The gate view on a remote property's broker while the link to the command post is down.

Mosquitto's bridge says, retained, on ``kent/{e}/bridge/{property}/state`` whether it
reaches the command post (``1``) or not (``0``). Here a real broker carries that word
(published as the bridge would); tests/integration/test_bridge.py drives a real
bridge between two brokers. The view keeps the last order and says why nothing new
comes.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import dashboard_samples as samples
import pytest
from dashboard_mqtt import publish
from live_support import until

from dashboards.common.widgets.banner import ConnectionBanner
from dashboards.gate.app import GateApp, make_gate_app
from dashboards.gate.widgets.order_sign import OrderSign
from kent_ops.broker.client import parse_broker_url
from kent_ops.broker.mosquitto import MosquittoBroker
from kent_ops.core.wire import Topics, encode_availability

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TOPICS = Topics(samples.EVENT)
STATE = TOPICS.bridge_state("camping-meadow")


def make_app(broker: MosquittoBroker, state_dir: Path) -> GateApp:
    return make_gate_app("north", samples.EVENT, parse_broker_url(broker.url), state_dir=state_dir)


def unreachable(app: GateApp) -> bool:
    return app.problem is not None and app.problem.startswith("Command post unreachable")


async def test_the_gate_view_says_the_command_post_is_unreachable_and_keeps_the_order(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    publish(
        broker,
        [
            (TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat())),
            (TOPICS.aggregator_availability, encode_availability(True)),
            (TOPICS.gate_command("north"), samples.command(admit=False)),
            (STATE, "1"),
        ],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        sign = app.screen.query_one(OrderSign)
        await until(pilot, lambda: sign.order.word == "HOLD")
        await until(pilot, lambda: app.problem is None)
        publish(broker, [(STATE, "0")])  # the link drops: Mosquitto says so, retained
        await until(pilot, lambda: unreachable(app))
        assert app.problem is not None
        assert " since " in app.problem  # seen happening, so the view knows when
        assert "this property's link is down" in app.problem
        assert "showing the last order received and figures from" in app.problem
        banner = app.screen.query_one(ConnectionBanner)
        await pilot.pause()
        assert banner.has_class("-shown")
        assert "Command post unreachable" in str(banner.render())
        assert sign.order.word == "HOLD"  # the last order stays
        assert app.has_class("-stale")
        publish(broker, [(STATE, "1")])  # the link is back
        await until(pilot, lambda: app.problem is None)
        assert not banner.has_class("-shown")
        assert sign.order.word == "HOLD"


async def test_a_view_started_during_an_outage_says_so_from_the_retained_state(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    publish(
        broker,
        [
            (TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat())),
            (TOPICS.gate_command("north"), samples.command(admit=True)),
            (STATE, "0"),
        ],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: unreachable(app))
        assert app.problem is not None
        assert " since " not in app.problem  # a retained word: when it began is not known
        assert app.screen.query_one(OrderSign).order.word == "ADMIT"


async def test_the_brokers_own_silence_comes_before_the_bridges_word(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    publish(
        broker,
        [(TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat())), (STATE, "0")],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: unreachable(app))
        broker.stop()  # now the property's own broker is gone: nothing is known
        await until(pilot, lambda: (app.problem or "").startswith("Broker unreachable"))
        broker.start()
        await until(pilot, lambda: unreachable(app), within=20)


async def test_a_word_that_is_not_the_bridges_is_ignored(
    broker: MosquittoBroker, tmp_path: Path
) -> None:
    publish(
        broker,
        [
            (TOPICS.status, samples.status(ts=datetime.now(UTC).isoformat())),
            (TOPICS.bridge_state("x"), "down"),
            (STATE, "1"),
        ],
    )
    app = make_app(broker, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.feed is not None and app.feed.connected)
        publish(broker, [(STATE, "0")])
        await until(pilot, lambda: unreachable(app))
        assert app.bridges_down.keys() == {"camping-meadow"}
