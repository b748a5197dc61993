"""The gate view's widgets."""
