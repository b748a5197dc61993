"""The parts of the post-event report: what is gathered, computed, drawn and written.

``kent_ops.report.build`` puts them together (``kent-ops report`` is
``kent_ops.commands.report``); each module here is one concept: the replay's collector
(``collect``), the findings and what they add up to (``findings``), the facts of one
report (``model``), the minute timeline (``timeline``, pandas), the charts (``charts``,
matplotlib) and the page (``page``, an HTML template and one module per group of
sections). The alerts it reads, replayed or logged live, are the typed records of
``kent_ops.core.wire``.
"""
