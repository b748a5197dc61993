"""The inspector's screens: main, alert detail, help, and the action forms."""
