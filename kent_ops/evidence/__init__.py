"""The evidence log: the hash chain, the append-only writer, the chain walk, replay, and
the whole chain verified in a second process."""
