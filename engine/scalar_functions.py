"""Scalar F.* wrappers (being written)."""
__all__: list[str] = []
