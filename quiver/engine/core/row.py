"""`Row`: a tuple with field names, as `pyspark.sql.Row`."""
from __future__ import annotations

from typing import Any


class Row(tuple):
    """`Row(name="a", age=1)` or `Row("name", "age")("a", 1)`; compares as a tuple."""

    __fields__: list[str]

    def __new__(cls, *args: Any, **kwargs: Any) -> Row:
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            row = tuple.__new__(cls, list(kwargs.values()))
            row.__fields__ = list(kwargs)
            return row
        row = tuple.__new__(cls, args)
        row.__fields__ = []
        return row

    @classmethod
    def _make(cls, names: list[str], values: tuple | list) -> Row:
        row = tuple.__new__(cls, values)
        row.__fields__ = list(names)
        return row

    def __call__(self, *args: Any) -> Row:
        """A Row of field names used as a factory: `Person = Row("name"); Person("a")`."""
        if len(args) > len(self):
            raise ValueError(f"Can not create Row with fields {self}, expected {len(self)} values but got {args}")
        return Row._make(list(self), args)

    def asDict(self, recursive: bool = False) -> dict[str, Any]:
        if not self.__fields__:
            raise TypeError("Cannot convert a Row class into dict")

        def conv(v: Any) -> Any:
            if not recursive:
                return v
            if isinstance(v, Row):
                return v.asDict(True)
            if isinstance(v, list):
                return [conv(x) for x in v]
            if isinstance(v, dict):
                return {k: conv(x) for k, x in v.items()}
            return v

        return {k: conv(v) for k, v in zip(self.__fields__, self)}

    def __contains__(self, item: Any) -> bool:
        return item in self.__fields__ if self.__fields__ else tuple.__contains__(self, item)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, (int, slice)):
            return tuple.__getitem__(self, item)
        try:
            return tuple.__getitem__(self, self.__fields__.index(item))
        except ValueError:
            raise KeyError(item) from None

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__"):
            raise AttributeError(item)
        try:
            return tuple.__getitem__(self, self.__fields__.index(item))
        except ValueError:
            raise AttributeError(f"Row has no field '{item}'; fields are {', '.join(self.__fields__)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        if key != "__fields__":
            raise RuntimeError("Row is read-only")
        object.__setattr__(self, key, value)

    def __reduce__(self) -> Any:
        return (Row._make, (self.__fields__, tuple(self)))

    def __repr__(self) -> str:
        if self.__fields__:
            return "Row(" + ", ".join(f"{k}={v!r}" for k, v in zip(self.__fields__, self)) + ")"
        return "<Row(" + ", ".join(repr(v) for v in self) + ")>"
