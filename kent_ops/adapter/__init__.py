"""``kent-ops adapt``: rented devices' own messages into kent-ops payloads.

A shell like the aggregator: it owns the MQTT connections, the clock and a state file;
reading and translating a message is the pure core's (:mod:`kent_ops.core.devices`).
"""
