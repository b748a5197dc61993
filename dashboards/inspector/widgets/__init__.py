"""The inspector's widgets, by screen region: header, glance, tables, alerts, action log."""
