"""kent-ops: event-day operations monitor for the Town of Kent mass-gathering law."""

__version__ = "0.1.0"
