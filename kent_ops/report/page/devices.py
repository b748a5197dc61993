"""Rented devices (in the data quality section): each figure back to the device's bytes."""

from __future__ import annotations

from html import escape

from kent_ops.report.devices import DeviceLink, RentedDevices
from kent_ops.report.page.fmt import Fmt, count, table

__all__ = ["rented_devices"]


def _row(link: DeviceLink, fmt: Fmt) -> str:
    return (
        f"<tr><td class='num'>{link.record:,}</td><td>{escape(fmt.when(link.at))}</td>"
        f"<td><code>{escape(link.topic)}</code></td>"
        f"<td class='num'>{link.size:,}</td><td><code>{link.sha256[:16]}…</code></td>"
        f"<td>{escape(link.translated)}</td></tr>"
    )


def rented_devices(devices: RentedDevices, fmt: Fmt) -> list[str]:
    """Per rented device: its messages, repeats and unreadable ones, and the links."""
    if not devices.sensors:
        return []
    out = [
        "<h3>Rented devices</h3>",
        "<p>Each message a rented device sent is in the evidence log as it arrived (its "
        "topic and bytes, base64 in <code>payload_b64</code>), with the kent-ops payload "
        "it became. A figure goes back to the device's own bytes through the record "
        "below; <code>kent-ops verify</code> proves the record unchanged.</p>",
    ]
    for sensor, tally in sorted(devices.sensors.items()):
        out.append(
            f"<h4>{escape(sensor)}</h4><p>{count(tally.received, 'message')} received: "
            f"{tally.translated:,} translated, {tally.repeats:,} repeats (redelivered), "
            f"{tally.unreadable:,} unreadable (listed with the rejected messages).</p>"
        )
        links = tally.first + tally.last
        rows = [_row(link, fmt) for link in links]
        if tally.received > len(links):
            gap = tally.received - len(links)
            rows.insert(
                len(tally.first),
                f"<tr><td colspan='6'>… {count(gap, 'more message')} in the log …</td></tr>",
            )
        out.append(
            table(
                ["Record", "Received", "Device topic", "Bytes", "SHA-256", "Became"], rows, {0, 3}
            )
        )
    return out
