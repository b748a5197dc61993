"""The command line: argument parsing and composition.

The only layer that may import ``sensors`` and ``dashboards``.
"""
