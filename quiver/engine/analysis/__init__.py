"""Analysis: names resolved to typed attributes, Spark's implicit casts, and each function's signature."""
