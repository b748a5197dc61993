"""The inspector dashboard (``kent-ops dashboard``): a live view of the aggregator's status."""
