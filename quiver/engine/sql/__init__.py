"""Spark SQL text as logical plans: statements, expressions, windows, PIVOT and views."""
