"""The exception types users catch: named after PySpark's so `except AnalysisException` works."""
from __future__ import annotations

import difflib
import os
import traceback
from collections.abc import Iterable

# Quiver's own package folder: frames in it are the engine's, not the user's.
_ENGINE_DIRS = (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep,)


def _rebuild_error(cls: type[QuiverError], args: tuple[object, ...], state: dict[str, object]) -> QuiverError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class QuiverError(Exception):
    """Base of every error Quiver raises on purpose."""

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle as the same type with the same attributes, whatever the subclass's `__init__` takes: an
        error raised in a Ray worker or a UDF process reaches the driver as itself (Spark's error class,
        SQLSTATE and parameters included), not as Ray's `UnserializableException`."""
        return (_rebuild_error, (type(self), self.args, dict(self.__dict__)))

    def _render_traceback_(self) -> list[str]:
        """How IPython and Jupyter show this error: the user's own frames and the message, without the
        engine's internals (which `%xmode Verbose` or `traceback.print_exc()` still show)."""
        frames = [f for f in traceback.extract_tb(self.__traceback__) if not f.filename.startswith(_ENGINE_DIRS)]
        lines = traceback.format_list(frames) if frames else []
        head = ["Traceback (most recent call last, Quiver's internal frames hidden):\n"] if lines else []
        cause = self.__cause__
        because = [f"\nCaused by {type(cause).__name__}: {cause}"] if cause is not None else []
        return [line.rstrip("\n") for line in head + lines] + [f"{type(self).__name__}: {self}"] + because


class AnalysisException(QuiverError):
    """A plan refers to something that does not exist or mixes incompatible types."""


class UnresolvedColumnError(AnalysisException):
    """A column name that matches nothing in scope."""


class ParseException(AnalysisException):
    """SQL text, a type string or a schema string could not be parsed."""


class QuiverNotSupported(QuiverError, NotImplementedError):
    """A part of PySpark's API Quiver does not have yet (`df.rdd`, `spark.read.orc`, ...): raised where it is
    used, naming it, instead of an AttributeError that reads like a typo. With PySpark's names in place
    (`quiver.use_as_pyspark()`, quiver-submit) it is `pyspark.errors.PySparkNotImplementedError`."""


SUPPORT_TABLE = "README.md, section 'What is supported, against PySpark'"


class MissingAttribute(QuiverNotSupported, AttributeError):
    """`QuiverNotSupported` for a member read as an attribute: an AttributeError too, so `hasattr(df, "rdd")`
    and `getattr(df, "rdd", None)` answer that it is missing, as they do for any absent attribute."""


def not_supported(owner: str, name: str, version: str) -> QuiverNotSupported:
    """The error for PySpark's `owner.name`, which Quiver lacks."""
    return MissingAttribute(
        f"{owner}.{name} is part of PySpark {version}'s API that Quiver does not support yet; "
        f"what Quiver supports is listed in {SUPPORT_TABLE}")


class SessionStoppedError(QuiverError, RuntimeError):
    """A job asked of a session after `spark.stop()` (Spark: "Cannot call methods on a stopped SparkContext")."""


class MissingDependency(QuiverError, ImportError):
    """An optional library a feature needs is not installed (pandas for toPandas, Ray for ray masters)."""


class ConfigurationError(QuiverError, ValueError):
    """A conf key or option has a value outside what it accepts."""


class TaskFailedError(QuiverError):
    """A task failed on every allowed attempt; names the stage, task and partition."""

    def __init__(self, message: str, stage_id: int, partition: int, attempts: int):
        super().__init__(message)
        self.stage_id = stage_id
        self.partition = partition
        self.attempts = attempts


def unknown_column(name: str, available: Iterable[str], what: str = "column") -> UnresolvedColumnError:
    """An error naming the missing column, the closest available one and all of them."""
    available = list(dict.fromkeys(available))
    close = difflib.get_close_matches(name, available, n=1, cutoff=0.5)
    hint = f" Did you mean '{close[0]}'?" if close else ""
    return UnresolvedColumnError(
        f"{what} '{name}' does not exist.{hint}\nAvailable columns: {', '.join(available) or '(none)'}"
    )


class StorageFullError(QuiverError):
    """A write found no space left on the file system it writes to (ENOSPC, or a quota: EDQUOT); names the
    output and how much space is free there. Not retried: every attempt of the task writes to the same
    file system, so a retry would only fill it again."""


class MemoryBudgetExceeded(QuiverError, MemoryError):
    """An operator's state does not fit the memory budget (`quiver.memory.limit`) even after spilling: one
    key's rows, one group or one row is larger than the budget. Names the operator, the key and the budget.
    Not retried: every attempt meets the same rows."""


class ResultTooLargeError(QuiverError):
    """An action's result for the driver (`collect()`, `toPandas()`) is larger than `spark.driver.maxResultSize`;
    raised as soon as the results received pass it, before the driver holds them all."""


class PythonException(QuiverError):
    """User Python code run by a task (a UDF, the function of mapInArrow / mapInPandas) raised, or
    returned something the declared type or schema cannot hold; names the function, with the
    original exception chained. PySpark's name for the same error."""


# ---------------------------------------------------------------- errors with Spark's error classes

_BYPASS = 'If necessary set "spark.sql.ansi.enabled" to "false" to bypass this error.'


class SparkRuntimeException(QuiverError):
    """A value a query met at run time that ANSI mode refuses: overflow, division by zero, a malformed cast,
    an index out of bounds. Carries Spark's error class, SQLSTATE and message parameters, and reads as
    Spark's message: `[DIVIDE_BY_ZERO] Division by zero. ... SQLSTATE: 22012`."""

    def __init__(self, error_class: str, message: str, sql_state: str, parameters: dict[str, str] | None = None):
        super().__init__(f"[{error_class}] {message} SQLSTATE: {sql_state}")
        self.error_class = error_class
        self.sql_state = sql_state
        self.parameters = dict(parameters or {})

    def getCondition(self) -> str:
        """Spark's error condition (its error class), e.g. `ARITHMETIC_OVERFLOW`."""
        return self.error_class

    getErrorClass = getCondition

    def getSqlState(self) -> str:
        return self.sql_state

    def getMessageParameters(self) -> dict[str, str]:
        return dict(self.parameters)


class ArithmeticException(SparkRuntimeException, ArithmeticError):
    """Overflow, division by zero, or a number out of its type's range, under ANSI mode."""


class NumberFormatException(SparkRuntimeException, ValueError):
    """A string cast to a number is malformed, under ANSI mode."""


class DateTimeException(SparkRuntimeException, ValueError):
    """A string cast to a date or timestamp is malformed, or a date field out of range, under ANSI mode."""


class ArrayIndexOutOfBoundsException(SparkRuntimeException, IndexError):
    """An array index beyond the array's elements, under ANSI mode."""


def arithmetic_overflow(try_function: str | None = None, what: str = "overflow") -> ArithmeticException:
    """`[ARITHMETIC_OVERFLOW]` for integer +, -, *, negation and sums; `try_function` is the try_* that gives
    NULL instead."""
    hint = f" Use '{try_function}' to tolerate overflow and return NULL instead." if try_function else ""
    return ArithmeticException("ARITHMETIC_OVERFLOW", f"{what}.{hint} {_BYPASS}", "22003",
                               {"message": what, "alternative": hint.strip()})


def divide_by_zero(remainder: bool = False) -> ArithmeticException:
    """`[DIVIDE_BY_ZERO]` for /, div; `[REMAINDER_BY_ZERO]` for %, mod, pmod."""
    if remainder:
        return ArithmeticException("REMAINDER_BY_ZERO", "Remainder by zero. Use `try_mod` to tolerate divisor being 0 "
                                   f"and return NULL instead. {_BYPASS}", "22012", {"config": "spark.sql.ansi.enabled"})
    return ArithmeticException("DIVIDE_BY_ZERO", "Division by zero. Use `try_divide` to tolerate divisor being 0 and "
                               f"return NULL instead. {_BYPASS}", "22012", {"config": "spark.sql.ansi.enabled"})


def numeric_value_out_of_range(value: object, precision: int, scale: int) -> ArithmeticException:
    """`[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION]`: a decimal result or cast that needs more digits than its type."""
    return ArithmeticException(
        "NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION",
        f" {value} cannot be represented as Decimal({precision}, {scale}). If necessary set \"spark.sql.ansi.enabled\" "
        "to \"false\" to bypass this error, and return NULL instead.", "22003",
        {"value": str(value), "precision": str(precision), "scale": str(scale)})


def cast_invalid_input(value: str, from_type: str, to_type: str) -> SparkRuntimeException:
    """`[CAST_INVALID_INPUT]`: a string that is no value of `to_type` (Spark's type names, upper case)."""
    kind: type[SparkRuntimeException] = (
        DateTimeException if to_type in ("DATE", "TIMESTAMP", "TIMESTAMP_NTZ")
        else SparkRuntimeException if to_type == "BOOLEAN" else NumberFormatException)
    return kind("CAST_INVALID_INPUT",
                f"The value '{value}' of the type \"{from_type}\" cannot be cast to \"{to_type}\" because it is "
                "malformed. Correct the value as per the syntax, or change its target type. Use `try_cast` to "
                "tolerate malformed input and return NULL instead.", "22018",
                {"expression": f"'{value}'", "sourceType": f'"{from_type}"', "targetType": f'"{to_type}"'})


def cast_overflow(value: str, from_type: str, to_type: str) -> ArithmeticException:
    """`[CAST_OVERFLOW]`: a number outside the range of the integral type it is cast to; `value` as Spark
    writes it (`3000000000L`, `1.0E20D`)."""
    return ArithmeticException("CAST_OVERFLOW",
                               f"The value {value} of the type \"{from_type}\" cannot be cast to \"{to_type}\" due to "
                               "an overflow. Use `try_cast` to tolerate overflow and return NULL instead.", "22003",
                               {"value": value, "sourceType": f'"{from_type}"', "targetType": f'"{to_type}"'})


def invalid_array_index(index: int, size: int, element_at: bool) -> ArrayIndexOutOfBoundsException:
    """`[INVALID_ARRAY_INDEX]` (`arr[i]`, 0-based) or `[INVALID_ARRAY_INDEX_IN_ELEMENT_AT]` (1-based)."""
    if element_at:
        return ArrayIndexOutOfBoundsException(
            "INVALID_ARRAY_INDEX_IN_ELEMENT_AT", f"The index {index} is out of bounds. The array has {size} elements. "
            "Use `try_element_at` to tolerate accessing element at invalid index and return NULL instead.", "22003",
            {"indexValue": str(index), "arraySize": str(size)})
    return ArrayIndexOutOfBoundsException(
        "INVALID_ARRAY_INDEX", f"The index {index} is out of bounds. The array has {size} elements. Use the SQL "
        "function `get()` to tolerate accessing element at invalid index and return NULL instead.", "22003",
        {"indexValue": str(index), "arraySize": str(size)})
