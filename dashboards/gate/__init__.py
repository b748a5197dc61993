"""The deputy's gate view (``kent-ops gate GATE``): ADMIT or HOLD, and a manual tally."""
