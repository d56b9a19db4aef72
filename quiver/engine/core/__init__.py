"""The bottom layer: data types, expressions, logical plans, errors and rows. Imports nothing else of Quiver."""
