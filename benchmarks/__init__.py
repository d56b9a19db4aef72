"""Reproducible side-by-side comparisons of Quiver with its peers."""
