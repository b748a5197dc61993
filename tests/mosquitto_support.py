"""A Mosquitto configuration read as its options, for the tests of the configurations
kent-ops writes (``kent-ops deploy``) and ships (deploy/mosquitto/)."""

from __future__ import annotations


def mosquitto_options(text: str) -> dict[str, list[str]]:
    """Each option of a Mosquitto configuration with every value it was given, in order;
    comments and blank lines left out, indentation ignored."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.strip().partition(" ")
            found.setdefault(key, []).append(value)
    return found
