"""What both dashboards share: the MQTT feed, the connection banner, formatting.

Written once so the inspector and the deputy see the same wording, the same colours
and the same idea of "connected" on their screens.
"""
