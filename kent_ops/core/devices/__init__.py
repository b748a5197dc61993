"""Rented devices: where a sensor's figures come from when it speaks its own protocol."""
