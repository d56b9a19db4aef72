"""What reading a PySpark name Quiver lacks raises: `QuiverNotSupported`, naming it, rather than an
AttributeError that reads like a typo (`df.rdd` used to list the columns)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from quiver.engine.api.missing_api import MISSING, PYSPARK_VERSION
from quiver.engine.core.errors import QuiverNotSupported, not_supported


def missing_member(owner: str, name: str) -> QuiverNotSupported | None:
    """The error for PySpark's `owner.name` where Quiver lacks it, else None (an ordinary AttributeError)."""
    if name in MISSING.get(owner, ()):
        return not_supported(owner, name, PYSPARK_VERSION)
    return None


def attribute_error(owner: str, name: str) -> AttributeError:
    """The AttributeError for a name PySpark's `owner` does not have either."""
    return AttributeError(f"'{owner}' object has no attribute '{name}'")


class PySparkMembers:
    """Base of an API class standing for PySpark's class `_pyspark_name`: reading a member PySpark's class has
    and this one lacks raises QuiverNotSupported naming it; any other unknown name an AttributeError."""

    _pyspark_name: ClassVar[str]

    if not TYPE_CHECKING:  # hidden from type checkers, so a misspelt method stays a type error there
        def __getattr__(self, name: str) -> Any:
            """Called for a name the class lacks: a member of PySpark's class that Quiver does not have yet raises
            QuiverNotSupported naming it (and where the supported API is listed); any other name raises
            AttributeError, as a typo should. Both are AttributeErrors, so `hasattr` and `getattr` with a default
            work as with PySpark's class.

            >>> df.groupBy("name").applyInPandas
            Traceback (most recent call last):
                ...
            quiver.engine.core.errors.MissingAttribute: GroupedData.applyInPandas is part of PySpark ...'s API that ...
            >>> df.groupBy("name").applyInPandaz
            Traceback (most recent call last):
                ...
            AttributeError: 'GroupedData' object has no attribute 'applyInPandaz'
            >>> hasattr(spark.read, "text")
            False
            """
            raise missing_member(self._pyspark_name, name) or attribute_error(self._pyspark_name, name)
