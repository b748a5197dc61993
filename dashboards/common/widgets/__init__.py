"""Widgets both dashboards use."""
