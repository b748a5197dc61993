"""The parts of the post-event report: what is gathered, computed, drawn and written.

``kent_ops.report.build`` puts them together; each module here is one concept: the replay's
collector, the findings and what they add up to, the minute timeline (pandas), the
charts (matplotlib) and the page (an HTML template).
"""
