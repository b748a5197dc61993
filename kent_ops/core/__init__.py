"""The pure core: the law, the permit, wire records, counting, rules, alerts, engine.

No MQTT, no SQLite, no clock, no Textual: every instant comes in through a call,
which is what lets a replay of the evidence log reproduce the live run exactly.
"""
