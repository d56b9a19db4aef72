"""The public API, shaped like PySpark: Session, DataFrame, Column, functions, readers and writers."""
