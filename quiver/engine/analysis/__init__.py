"""Analysis: names resolved to typed attributes, Spark's implicit casts, each function's signature, and the plan
builder the DataFrame API and SQL share."""
