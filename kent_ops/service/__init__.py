"""The aggregator service (``kent-ops run``): MQTT in, evidence log, engine, MQTT out."""
