"""The gate view's screens: the order, and help."""
