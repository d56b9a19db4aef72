"""The analyzer's view of each function, by domain: arity, implicit casts, result type and column name."""
