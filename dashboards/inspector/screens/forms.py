"""The action forms (acknowledge, note, adjust, deficient) and the confirmation before sending.

Each form returns what the inspector typed, or None when cancelled; nothing is sent
until the confirmation screen, which shows exactly what will be published and under
which inspector id, returns True.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from dashboards.common.format import clean
from kent_ops.core import wire

__all__ = [
    "AckForm",
    "AdjustForm",
    "AdjustInput",
    "ConfirmScreen",
    "DeficientForm",
    "Form",
    "NoteForm",
    "NoteInput",
    "field_input",
]


def field_input(blink: bool, **kwargs: Any) -> Input:
    """An input whose cursor blinks or not (snapshots turn blinking off, so they repeat)."""
    field = Input(**kwargs)
    field.cursor_blink = blink
    return field


class Form(ModalScreen[Any]):
    """A centred dialog with a title, fields, a line for what is wrong and a hint.

    Subclasses yield their fields from :meth:`fields`; every widget id names its form
    and its field (``adjust-reason``), so no stylesheet rule meant for a panel of the
    main screen can reach a field.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, *, blink: bool = True, id: str | None = None) -> None:
        super().__init__(id=id, classes="form-screen")
        self.form_title = title
        self.blink = blink

    def fields(self) -> ComposeResult:
        yield from ()

    def compose(self) -> ComposeResult:
        with Vertical(classes="form"):
            yield Static(Text(self.form_title, style="bold"), classes="form-title")
            yield from self.fields()
            yield Static(Text(""), classes="form-error")
            yield Static(
                Text("Enter: continue to confirm · Esc: cancel", style="dim"), classes="form-hint"
            )

    def error(self, message: str) -> None:
        self.query_one(".form-error", Static).update(Text(message, style="bold red"))

    def action_cancel(self) -> None:
        self.dismiss(None)


class AckForm(Form):
    """The comment for an acknowledgement; required, it is what the record will say."""

    def __init__(self, alert_id: str, alert: wire.Alert | None, *, blink: bool = True) -> None:
        rule = clean(alert.rule, limit=60) if alert is not None else ""
        title = f"Acknowledge {clean(alert_id, limit=40)}" + (f" ({rule})" if rule else "")
        super().__init__(title, blink=blink, id="ack-form")
        self.alert = alert

    def fields(self) -> ComposeResult:
        if self.alert is not None and self.alert.message:
            yield Static(Text(clean(self.alert.message)), classes="form-context")
        yield Label("Comment (what you did or saw)")
        yield field_input(self.blink, id="ack-comment", placeholder="e.g. Called the organiser")

    @on(Input.Submitted, "#ack-comment")
    def _submit(self, event: Input.Submitted) -> None:
        comment = event.value.strip()
        if not comment:
            self.error("An acknowledgement needs a comment.")
            return
        self.dismiss(comment)


@dataclass(frozen=True, slots=True)
class NoteInput:
    """A note's text and, optionally, the alert it is about."""

    text: str
    alert: str | None


class NoteForm(Form):
    """A note, optionally tied to an alert (filled in when opened from one)."""

    def __init__(
        self, alert_id: str | None, known_alerts: Collection[str], *, blink: bool = True
    ) -> None:
        about = f" about {clean(alert_id, limit=40)}" if alert_id else ""
        super().__init__(f"Add a note{about}", blink=blink, id="note-form")
        self.alert_id = alert_id
        self.known_alerts = known_alerts

    def fields(self) -> ComposeResult:
        yield Label("Note")
        yield field_input(
            self.blink, id="note-text", placeholder="e.g. No drinking water at the east field"
        )
        yield Label("About alert (optional)")
        yield field_input(
            self.blink, id="note-alert", value=self.alert_id or "", placeholder="e.g. A-0007"
        )

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        text = self.query_one("#note-text", Input).value.strip()
        alert = self.query_one("#note-alert", Input).value.strip() or None
        if not text:
            self.query_one("#note-text", Input).focus()
            self.error("The note is empty.")
            return
        if alert is not None and alert not in self.known_alerts:
            self.error(
                f"There is no alert {clean(alert, limit=40)}; leave it blank for a general note."
            )
            return
        self.dismiss(NoteInput(text, alert))


@dataclass(frozen=True, slots=True)
class AdjustInput:
    """The counted attendance and why it replaces the counters' figure."""

    attendance: int
    reason: str


class AdjustForm(Form):
    """An attendance correction: a counted figure and a required reason."""

    def __init__(self, current: int | None, *, blink: bool = True) -> None:
        super().__init__("Adjust attendance", blink=blink, id="adjust-form")
        self.current = current

    def fields(self) -> ComposeResult:
        shown = f"{self.current:,}" if self.current is not None else "unknown"
        yield Static(
            Text(
                f"The counters say {shown}. From now on attendance = counters + the offset "
                "this sets."
            ),
            classes="form-context",
        )
        yield Label("Counted attendance")
        yield field_input(
            self.blink, id="adjust-attendance", type="integer", placeholder="e.g. 3050"
        )
        yield Label("Reason (required)")
        yield field_input(
            self.blink, id="adjust-reason", placeholder="e.g. sweep count of the grounds"
        )

    @on(Input.Submitted)
    def _submit(self, event: Input.Submitted) -> None:
        raw = self.query_one("#adjust-attendance", Input).value.strip()
        reason = self.query_one("#adjust-reason", Input).value.strip()
        try:
            attendance = int(raw)
        except ValueError:
            self.query_one("#adjust-attendance", Input).focus()
            self.error("Attendance must be a whole number.")
            return
        if attendance < 0:
            self.error("Attendance cannot be negative.")
            return
        if not reason:
            self.query_one("#adjust-reason", Input).focus()
            self.error("An adjustment needs a reason.")
            return
        self.dismiss(AdjustInput(attendance, reason))


class DeficientForm(Form):
    """What was found, for a checklist item marked deficient; required: it is the evidence."""

    def __init__(self, item: str, text: str, cite: str, *, blink: bool = True) -> None:
        super().__init__(
            f"Mark {clean(item, limit=40)} deficient", blink=blink, id="deficient-form"
        )
        self.item, self.text, self.cite = item, text, cite

    def fields(self) -> ComposeResult:
        context = Text(clean(self.text))
        context.append(f"  {clean(self.cite)}", style="cyan")
        yield Static(context, classes="form-context")
        yield Label("What was found (required: it is the evidence)")
        yield field_input(
            self.blink, id="deficient-found", placeholder="e.g. common cup at water station 2"
        )

    @on(Input.Submitted, "#deficient-found")
    def _submit(self, event: Input.Submitted) -> None:
        found = event.value.strip()
        if not found:
            self.error("A deficient mark needs a note saying what was found.")
            return
        self.dismiss(found)


class ConfirmScreen(ModalScreen[bool]):
    """Shows exactly what will be published, and by whom; y sends, n or Esc does not.

    What will be sent scrolls inside the dialog (a note may be 4,000 characters), so
    the buttons always stay on screen.
    """

    BINDINGS = [
        Binding("y", "answer(True)", "Send"),
        Binding("n,escape", "answer(False)", "Cancel"),
    ]

    def __init__(self, what: str, signer: str, topic: str, *, question: str = "Send this?") -> None:
        super().__init__(id="confirm", classes="form-screen")
        self.what, self.signer, self.topic, self.question = what, signer, topic, question

    def compose(self) -> ComposeResult:
        with Vertical(classes="form"):
            yield Static(Text(self.question, style="bold"), classes="form-title")
            with VerticalScroll(classes="form-what"):
                lines = "\n".join(clean(line) for line in self.what.split("\n"))
                yield Static(Text(lines), id="confirm-what", classes="form-context")
            yield Static(
                Text(f"signed as {clean(self.signer)} · {self.topic}", style="dim"),
                classes="form-hint",
            )
            with Horizontal(classes="form-buttons"):
                yield Button("Send (y)", id="confirm-send", variant="primary")
                yield Button("Cancel (n)", id="confirm-cancel")

    def on_mount(self) -> None:
        self.query_one("#confirm-send", Button).focus()

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-send")
