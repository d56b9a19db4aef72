"""PostgreSQL connections for the jdbc connector: a JDBC-style URL and connection properties
become one libpq URI, connections come from the ADBC PostgreSQL driver, and a failure becomes an
error that names the server, the user, the database or the table."""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

from quiver.engine.core.errors import AnalysisException, ConfigurationError, QuiverError

DEFAULT_PORT = 5432
# pgjdbc gives up on an unreachable server after 10 s; libpq would wait for the OS (minutes).
DEFAULT_CONNECT_TIMEOUT_S = 10

# A pgjdbc connection property or libpq parameter (lower-cased) -> the libpq parameter it sets.
_PARAMETERS = {
    "user": "user", "password": "password", "sslmode": "sslmode", "sslrootcert": "sslrootcert",
    "sslcert": "sslcert", "sslkey": "sslkey", "connecttimeout": "connect_timeout",
    "connect_timeout": "connect_timeout", "applicationname": "application_name",
    "application_name": "application_name", "options": "options",
}
# pgjdbc properties that are no libpq parameter but translate into one.
_TRANSLATED = ("ssl", "currentschema")
CONNECTION_PROPERTIES = ("user", "password", "sslmode", "ssl", "sslrootcert", "sslcert", "sslkey",
                         "connectTimeout", "ApplicationName", "currentSchema", "options")
_SCHEMES = ("jdbc:postgresql:", "postgresql:", "postgres:")


class JdbcError(QuiverError):
    """PostgreSQL could not be reached, refused the credentials, or failed a statement; names the
    server (host:port and database) and carries the driver's message."""


@dataclass(frozen=True)
class PostgresTarget:
    """Where and as whom to connect: a libpq URI (credentials included, never shown) and its parts
    for messages."""

    uri: str
    server: str
    database: str
    user: str | None

    def __str__(self) -> str:
        return f"postgresql://{self.server}/{self.database}"


def is_connection_property(key: str) -> bool:
    """Whether `key` (any case) is a connection property rather than a reader or writer option."""
    return key.lower() in _PARAMETERS or key.lower() in _TRANSLATED


def postgres_target(url: str, properties: Mapping[str, Any]) -> PostgresTarget:
    """The server of `url` (`jdbc:postgresql://host:port/db?user=..` or `postgresql://..`) with
    connection `properties` (user, password, sslmode, ...) added; properties win over the URL's."""
    text = str(url).strip()
    scheme = next((s for s in _SCHEMES if text.lower().startswith(s)), None)
    if scheme is None:
        raise ConfigurationError(
            f"JDBC url {_without_password(text)!r} is not a PostgreSQL url; Quiver's jdbc connector reads and "
            "writes PostgreSQL: use jdbc:postgresql://host:port/database or postgresql://host:port/database")
    rest = text[len(scheme):]
    rest, _, query = rest.partition("?")
    if rest.startswith("//"):
        netloc, _, database = rest[2:].partition("/")
    else:
        netloc, database = "", rest
    userinfo, _, hosts = netloc.rpartition("@")
    params: dict[str, str] = {}
    if userinfo:
        user, _, password = userinfo.partition(":")
        params["user"] = unquote(user)
        if password:
            params["password"] = unquote(password)
    for key, value in parse_qsl(query, keep_blank_values=True):
        _set_parameter(params, key, value, "url parameter")
    for key, value in properties.items():
        if value is not None:
            _set_parameter(params, key, str(value), "connection property")
    params.setdefault("connect_timeout", str(DEFAULT_CONNECT_TIMEOUT_S))
    # Quiver timestamps are UTC: the session zone makes timestamptz values and literals UTC too.
    params["options"] = (params.get("options", "") + " -c TimeZone=UTC").strip()
    hosts = hosts or "localhost"
    server = hosts if ("," in hosts or re.search(r":\d+$", hosts)) else f"{hosts}:{DEFAULT_PORT}"
    database = unquote(database)
    uri = f"postgresql://{server}/{quote(database, safe='')}?{urlencode(params, quote_via=quote)}"
    return PostgresTarget(uri, server, database or params.get("user", ""), params.get("user"))


def _set_parameter(params: dict[str, str], key: str, value: str, where: str) -> None:
    name = key.lower()
    if name == "ssl":
        if value.lower() in ("", "true"):
            params.setdefault("sslmode", "require")
        return
    if name == "currentschema":
        params["options"] = (params.get("options", "") + f" -c search_path={value}").strip()
        return
    if name not in _PARAMETERS:
        raise ConfigurationError(
            f"unknown PostgreSQL {where} {key!r}; valid ones are {', '.join(CONNECTION_PROPERTIES)}")
    params[_PARAMETERS[name]] = value


def _without_password(url: str) -> str:
    url = re.sub(r"(?i)(password=)[^&]*", r"\1***", url)
    return re.sub(r"(//[^/:@]*:)[^/@]*@", r"\1***@", url)


def _driver() -> Any:
    try:
        import adbc_driver_postgresql.dbapi as dbapi
    except ImportError as e:
        raise JdbcError("jdbc needs the ADBC PostgreSQL driver: pip install \"quiver-dataflow[postgres]\" "
                        "(the adbc-driver-postgresql and adbc-driver-manager packages)") from e
    return dbapi


def _driver_errors() -> tuple[type[BaseException], ...]:
    import adbc_driver_manager

    return (adbc_driver_manager.Error,)


def _message(error: BaseException) -> str:
    text = str(error).strip()
    for prefix in ("IO: [libpq] Failed to connect: ", "IO: [libpq] "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return re.sub(r"\s+", " ", text).strip()


def connect(target: PostgresTarget, autocommit: bool = True) -> Any:
    """An ADBC DB-API connection to `target`; a failure to connect says whether the server was
    unreachable, refused the credentials or has no such database."""
    dbapi = _driver()
    try:
        return dbapi.connect(target.uri, autocommit=autocommit)
    except _driver_errors() as e:
        detail = _message(e)
        if re.search(r"password authentication failed|role \".*\" does not exist|no pg_hba\.conf entry|"
                     r"authentication failed|permission denied for database", detail):
            raise JdbcError(f"PostgreSQL at {target.server} rejected the credentials of user "
                            f"{target.user!r}: {detail}") from e
        if re.search(r"database \".*\" does not exist", detail):
            raise JdbcError(f"database {target.database!r} does not exist on PostgreSQL at "
                            f"{target.server}: {detail}") from e
        raise JdbcError(f"could not connect to PostgreSQL at {target.server} (database "
                        f"{target.database!r}): {detail}") from e


@contextmanager
def session(target: PostgresTarget, autocommit: bool = True) -> Iterator[tuple[Any, Any]]:
    """A connection and a cursor on it, both closed on the way out."""
    connection = connect(target, autocommit)
    try:
        with connection.cursor() as cursor:
            yield connection, cursor
    finally:
        connection.close()


def execute(cursor: Any, target: PostgresTarget, sql: str, parameters: Sequence[Any] | None = None,
            relation: str | None = None) -> None:
    """Run `sql` on `cursor`; a missing `relation` is an `AnalysisException` naming it, any other
    failure a `JdbcError` naming the server and the statement."""
    try:
        cursor.execute(sql, parameters=parameters)
    except _driver_errors() as e:
        raise statement_error(e, target, sql, relation) from e


def statement_error(error: BaseException, target: PostgresTarget, sql: str, relation: str | None) -> QuiverError:
    """The error to raise for a statement the server failed: the server's own message and SQLSTATE,
    an `AnalysisException` where the statement names something that does not exist."""
    text = str(error)
    found = re.search(r"ERROR:\s+(.*)", text)
    reason = found.group(1).strip() if found else _message(error)
    state = re.search(r"SQLSTATE: (\w{5})", text)
    code = state.group(1) if state else ""
    if code == "42P01" and relation is not None:
        return AnalysisException(f"JDBC table {relation!r} does not exist in {target}: {reason}")
    where = f" (SQLSTATE {code})" if code else ""
    if code.startswith("42"):
        return AnalysisException(f"PostgreSQL at {target} rejected {sql!r}: {reason}{where}")
    return JdbcError(f"PostgreSQL at {target} failed {sql!r}: {reason}{where}")


def quote_identifier(name: str) -> str:
    """`name` as a PostgreSQL identifier, case and odd characters kept."""
    return '"' + name.replace('"', '""') + '"'

