"""Talking to an MQTT broker: addresses, paho clients set up once, a private Mosquitto."""
