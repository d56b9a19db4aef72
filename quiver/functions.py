"""`from quiver import functions as F`: the same names as `pyspark.sql.functions`."""
from typing import TYPE_CHECKING

from quiver.engine.api.functions import *  # noqa: F401,F403

if not TYPE_CHECKING:
    from quiver.engine.api.functions import __all__  # noqa: F401



if not TYPE_CHECKING:  # hidden from type checkers, so that a misspelt function stays a type error there
    def __getattr__(name: str) -> object:
        """A function of `pyspark.sql.functions` Quiver lacks raises QuiverNotSupported, naming it."""
        from quiver.engine.api.unsupported import attribute_error, missing_member

        raise missing_member("functions", name) or attribute_error("module 'quiver.functions'", name)
