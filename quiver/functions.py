"""`from quiver import functions as F`: the same names as `pyspark.sql.functions`."""
from typing import TYPE_CHECKING

from quiver.engine.api.functions import *  # noqa: F401,F403

if not TYPE_CHECKING:
    from quiver.engine.api.functions import __all__  # noqa: F401
