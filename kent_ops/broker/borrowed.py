"""A device's link over a connection someone else owns (a gate view's, a gate hub's).

A device (``sensors/device.py``) sends through a link that says whether it is online
and tells it when that changes (``sensors/links.py``, ``Link``). The deputy's manual
tally sends through the connection its gate view or its gate hub already holds: that
connection's owner calls :meth:`BorrowedLink.came_up` and :meth:`BorrowedLink.went_down`,
and the device announces itself exactly once per connection, in order. Subclasses say
how a message is sent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

__all__ = ["BorrowedLink"]


class BorrowedLink(ABC):
    """Online from :meth:`came_up` to :meth:`went_down`; the attached device is told."""

    def __init__(self) -> None:
        self.on_up: Callable[[], None] | None = None
        self.on_down: Callable[[], None] | None = None
        self._up = False

    @property
    def online(self) -> bool:
        return self._up

    @abstractmethod
    def send(self, topic: str, payload: bytes, retain: bool) -> None:
        """Send one message over the owner's connection (each owner says how)."""

    def came_up(self) -> None:
        """The connection is up (again): the attached device announces itself."""
        self._up = True
        if self.on_up is not None:
            self.on_up()

    def went_down(self) -> None:
        """The connection is down: the device keeps what it counts for the reconnection."""
        self._up = False
        if self.on_down is not None:
            self.on_down()
