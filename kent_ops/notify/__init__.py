"""``kent-ops notify``: each new breach, and its end, to the people a config file names.

A breach raised while the inspector looks elsewhere must not wait until they look back.
This shell watches the aggregator's retained alerts and sends a notice through apprise
(mail, ntfy, SMS gateways, Signal, …) once when an alert is raised and once when it is
cleared, retrying a channel that is down; it publishes a ``sent`` record for every
attempt so the evidence log proves who was told what, and when.

- :mod:`~kent_ops.notify.config`: the config file (people, channels, retries), private;
- :mod:`~kent_ops.notify.message`: the notice's title and text;
- :mod:`~kent_ops.notify.plan`: which notices an alert calls for, once each;
- :mod:`~kent_ops.notify.ledger`: what was sent, kept across restarts;
- :mod:`~kent_ops.notify.scrub`: no address or secret in a log line or a record;
- :mod:`~kent_ops.notify.delivery`: one channel through apprise, with backoff;
- :mod:`~kent_ops.notify.service`: the MQTT side and the sending thread.
"""
