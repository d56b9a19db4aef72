"""Errors keep their type and attributes across processes: a Ray worker or a UDF process raises them, the
driver re-raises them, and the user's `except ArithmeticException` and `getCondition()` still work."""
from __future__ import annotations

import pickle

import pytest

from quiver.engine.core.errors import (
    ArithmeticException,
    SparkRuntimeException,
    TaskFailedError,
    arithmetic_overflow,
)
from quiver.engine.execution.jobs import JobCancelledError
from quiver.engine.execution.tasks import BlocksLost


def _round_trip(error: BaseException) -> BaseException:
    return pickle.loads(pickle.dumps(error))


def test_a_spark_runtime_error_keeps_its_class_condition_state_and_parameters_when_pickled():
    error = arithmetic_overflow("try_add")
    again = _round_trip(error)
    assert type(again) is ArithmeticException
    assert isinstance(again, SparkRuntimeException)
    assert str(again) == str(error)
    assert again.getCondition() == "ARITHMETIC_OVERFLOW"
    assert again.getSqlState() == error.getSqlState()
    assert again.getMessageParameters() == error.getMessageParameters()


@pytest.mark.parametrize(
    "error",
    [
        TaskFailedError("task 3 failed", stage_id=1, partition=3, attempts=4),
        JobCancelledError(7, "because the user asked"),
        BlocksLost((), "worker died"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_errors_whose_constructor_takes_more_than_a_message_pickle_with_their_attributes(error):
    again = _round_trip(error)
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert vars(again) == vars(error)
