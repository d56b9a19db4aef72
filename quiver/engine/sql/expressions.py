"""Spark SQL expressions: sqlglot parses the text, this module turns its tree into our `Expr` nodes.

sqlglot normalizes function calls into its own classes (`ucase` becomes `Upper`, `substr`
becomes `Substring`), which loses the name Spark shows in column headers. Our dialect
therefore keeps every call as `exp.Anonymous` with the name as written, and only the calls
with special syntax (CAST, EXTRACT, TRIM(BOTH .. FROM ..), SUBSTRING(.. FROM .. FOR ..)) go
through sqlglot's own parsers. `ScalarFunction(name, args)` then carries Spark's
lower-case function name and the arguments in Spark's order.
"""
from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import sqlglot
from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ParseError, TokenError

from quiver.engine.analysis import builder
from quiver.engine.analysis.catalog import RegisteredFunction
from quiver.engine.analysis.generators import MultiAlias
from quiver.engine.core import types as T
from quiver.engine.core.errors import AnalysisException, ParseException
from quiver.engine.core.expressions import (
    TRY_ARITHMETIC_NAMES,
    WINDOW_FUNCTIONS,
    AggregateFunction,
    Alias,
    And,
    BinaryArithmetic,
    CaseWhen,
    Cast,
    Comparison,
    Expr,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Negate,
    Not,
    Or,
    ScalarFunction,
    SortOrder,
    UnresolvedColumn,
    UnresolvedStar,
    contains_window,
    new_expr_id,
)
from quiver.engine.core.plan import LogicalPlan
from quiver.engine.core.subqueries import Exists, InSubquery, scalar_subquery
from quiver.engine.sql.display import SparkDisplay, name_select_item, strip_display
from quiver.engine.sql.windows import named_windows, translate_window

# Calls whose syntax is more than `name(arg, ...)`; every other call stays exp.Anonymous.
_SPECIAL_SYNTAX = ("CAST", "TRY_CAST", "EXTRACT", "TRIM", "SUBSTRING", "SUBSTR")
# Join hints (/*+ BROADCAST(t) */) are parsed through the same table; Quiver ignores them.
_HINTS = ("BROADCAST", "BROADCASTJOIN", "MAPJOIN", "MERGE", "MERGEJOIN", "SHUFFLE_HASH", "SHUFFLEMERGE",
          "SHUFFLE_REPLICATE_NL")


def _remember_name(name: str, parse: Callable) -> Callable:
    """Wrap a sqlglot function parser so the node remembers the name it was called by (substr vs substring)."""
    def run(parser: Spark.Parser) -> exp.Expression | None:
        node = parse(parser)
        if isinstance(node, exp.Expression):
            node.meta["spark_name"] = name.lower()
        return node
    return run


class QuiverSpark(Spark):
    """Spark's dialect, but function calls keep the name they were written with, and a subscript after a
    call is a subscript: `array(1, 2, 3)[5]` is the element at 5, not an array of 5 (sqlglot reads `ARRAY[...]`
    as a constructor, which Spark's SQL does not have)."""

    class Parser(Spark.Parser):
        FUNCTIONS: dict = {}
        ARRAY_CONSTRUCTORS: dict = {}
        FUNCTION_PARSERS = {
            name: _remember_name(name, parse) for name, parse in Spark.Parser.FUNCTION_PARSERS.items()
            if name in _SPECIAL_SYNTAX + _HINTS
        }


def parse_sql(text: str, what: str = "SQL") -> list[exp.Expression]:
    """Parse SQL text into sqlglot trees, turning sqlglot's errors into a ParseException with the position."""
    if not isinstance(text, str) or not text.strip():
        raise ParseException(f"empty {what}: {text!r}; write e.g. 'SELECT a FROM t' or 'a + 1'")
    try:
        return [node for node in sqlglot.parse(text, read=QuiverSpark) if node is not None]
    except ParseError as exc:
        raise ParseException(_syntax_error_message(text, exc, what)) from exc
    except TokenError as exc:
        raise ParseException(
            f"syntax error in {what} {text!r}: {exc}; check for an unterminated string or quoted name"
        ) from exc


# sqlglot's messages name its own classes and print token reprs; these turn them into words.
_MISSING_PART = re.compile(r"Required keyword: '(\w+)' missing for <class '(?:\w+\.)*(\w+)'>")
_TOKEN_REPR = re.compile(r"<Token token_type: TokenType\.(\w+), text: (.*?), line: .*?>")


def _syntax_error_message(text: str, exc: ParseError, what: str) -> str:
    if not exc.errors:
        return f"syntax error in {what} {text!r}: {exc}"
    err = exc.errors[0]
    line, col = err.get("line") or 1, err.get("col") or 1
    near = err.get("highlight") or ""
    source_line = text.splitlines()[line - 1] if text.splitlines() else text
    caret = " " * max(0, col - max(len(near), 1)) + "^" * max(len(near), 1)
    expected = _TOKEN_REPR.sub(_describe_token, err.get("description") or "a valid expression")
    expected = _MISSING_PART.sub(
        lambda m: f"{m.group(2).upper()} is incomplete: expected an expression after it",
        expected)
    return (f"syntax error in {what} at line {line}, column {col}" + (f" near '{near}'" if near else "")
            + f": {expected}\n  {source_line}\n  {caret}\nin: {text!r}")


def _describe_token(m: re.Match) -> str:
    """sqlglot prints tokens as reprs in its messages; show the text, or 'the end of the input'."""
    return "the end of the input" if m.group(1) == "SENTINEL" else f"'{m.group(2)}'"


def parse_expression(text: str) -> Expr:
    """One Spark SQL expression (`F.expr`, `selectExpr`, `filter("a > 1")`) as an unresolved `Expr`."""
    nodes = parse_sql(text, "expression")
    if len(nodes) != 1 or isinstance(nodes[0], (exp.Query, exp.Command, exp.Create, exp.DML)):
        raise ParseException(f"expected one SQL expression such as 'a + 1' or 'upper(name) AS n', got {text!r}")
    translator = ExpressionTranslator(text)
    node = nodes[0]
    if isinstance(node, exp.Alias):
        return Alias(strip_display(translator.translate(node.this)), node.alias)
    if isinstance(node, exp.Aliases):  # `posexplode(xs) AS (p, x)`: one name per generated column
        return MultiAlias(translator.clean(node.this), tuple(i.name for i in node.expressions))
    return name_select_item(translator.translate(node), ())


# ---------------------------------------------------------------- aggregates

# SQL name -> our aggregate; the SQL name is kept for display where the two differ (mean(x)).
AGGREGATES = {
    "count": "count", "sum": "sum", "avg": "avg", "mean": "avg", "min": "min", "max": "max",
    "first": "first", "first_value": "first", "last": "last", "last_value": "last", "any_value": "any_value",
    "stddev": "stddev", "std": "stddev", "stddev_samp": "stddev_samp", "stddev_pop": "stddev_pop",
    "variance": "variance", "var_samp": "var_samp", "var_pop": "var_pop",
    "collect_list": "collect_list", "collect_set": "collect_set",
    "bool_and": "bool_and", "every": "bool_and", "bool_or": "bool_or", "some": "bool_or",
    "product": "product", "median": "median", "approx_count_distinct": "count", "try_sum": "sum", "try_avg": "avg",
}

# Spark aggregates Quiver does not compute yet: named so the error says so instead of "unknown function".
_UNSUPPORTED_AGGREGATES = frozenset({
    "percentile", "percentile_approx", "approx_percentile", "percentile_cont", "percentile_disc", "min_by",
    "max_by", "corr", "covar_pop", "covar_samp", "kurtosis", "skewness", "count_if", "mode", "string_agg",
    "listagg", "array_agg", "histogram_numeric", "count_min_sketch", "regr_avgx", "regr_avgy", "regr_count",
    "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "bit_and", "bit_or",
    "bit_xor",
})

# Spark's cast functions: int(x) is CAST(x AS INT).
_CAST_FUNCTIONS = {
    "boolean": "boolean", "tinyint": "tinyint", "smallint": "smallint", "int": "int", "bigint": "bigint",
    "float": "float", "double": "double", "decimal": "decimal", "string": "string", "binary": "binary",
    "date": "date", "timestamp": "timestamp",
}

_TRIM_FUNCTIONS = frozenset({"trim", "ltrim", "rtrim"})
# try_add(a, b) ...: the operator that gives NULL where it would raise under ANSI mode.
_TRY_OPERATORS = {name: op for op, name in TRY_ARITHMETIC_NAMES.items()}

# EXTRACT(field FROM x) -> the function Spark rewrites it to.
_EXTRACT_FIELDS = {
    "YEAR": "year", "YEARS": "year", "Y": "year", "QUARTER": "quarter", "MONTH": "month", "MONTHS": "month",
    "MON": "month", "WEEK": "weekofyear", "WEEKS": "weekofyear", "W": "weekofyear", "DAY": "day", "DAYS": "day",
    "D": "day", "DAYOFWEEK": "dayofweek", "DOW": "dayofweek", "DOY": "dayofyear", "HOUR": "hour", "HOURS": "hour",
    "H": "hour", "MINUTE": "minute", "MINUTES": "minute", "M": "minute", "SECOND": "second", "SECONDS": "second",
    "S": "second",
}

_ARITHMETIC = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}
_COMPARISON = {exp.EQ: "=", exp.GT: ">", exp.GTE: ">=", exp.LT: "<", exp.LTE: "<=", exp.NullSafeEQ: "<=>"}
_BITWISE = {exp.BitwiseAnd: "&", exp.BitwiseOr: "|", exp.BitwiseXor: "^"}
_PATTERNS = {exp.Like: "like", exp.ILike: "ilike", exp.RegexpLike: "rlike"}

_SUFFIXED_NUMBER = re.compile(r"(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)(BD|[LSYDF])", re.IGNORECASE)
_TYPED_LITERAL_KEYWORD = re.compile(r"(?:^|[^\w`])(DATE|TIMESTAMP|TIMESTAMP_NTZ|TIMESTAMP_LTZ)\s*$", re.IGNORECASE)

_SUBQUERY_HINT = "IN, EXISTS and scalar subqueries are supported; rewrite this one with a join"

# ---------------------------------------------------------------- translation


class ExpressionTranslator:
    """Translates sqlglot expression trees of one SQL text into unresolved `Expr` trees.

    The result may hold `SparkDisplay` markers; callers name select-list entries with
    `name_select_item` and pass everything else through `strip_display`.
    """

    def __init__(self, text: str, subquery_plan: Callable[[exp.Expression], LogicalPlan] | None = None,
                 functions: Callable[[str], RegisteredFunction | None] | None = None):
        self.text = text
        # Plans the query of a subquery expression in the scope of the clause being translated.
        self.subquery_plan = subquery_plan
        # The session's registered functions by name (its catalog's); they come before built-in ones.
        self.functions = functions
        # The WINDOW clause of the SELECT being translated: name -> definition.
        self.windows: dict[str, exp.Window] = {}

    @contextmanager
    def window_clause(self, definitions: list[exp.Window]) -> Iterator[None]:
        """Translate one SELECT's expressions with its WINDOW clause's names (and no outer query's) in scope."""
        saved, self.windows = self.windows, named_windows(definitions)
        try:
            yield
        finally:
            self.windows = saved

    def order_item(self, node: exp.Ordered) -> SortOrder:
        """An ORDER BY item (of a query, an OVER clause, WITHIN GROUP): its expression, direction and nulls."""
        return sort_order(self.translate(node.this), node)

    def translate(self, node: exp.Expression) -> Expr:
        """The `Expr` for one sqlglot expression node."""
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            return getattr(self, handler)(node)
        for table, build in ((_ARITHMETIC, self._arithmetic), (_COMPARISON, self._comparison),
                             (_BITWISE, self._bitwise), (_PATTERNS, self._pattern)):
            if type(node) in table:
                return build(node, table[type(node)])
        if isinstance(node, exp.Func):
            return self._generic_function(node)
        raise self.unsupported(node, "this SQL construct")

    def clean(self, node: exp.Expression) -> Expr:
        """`translate` without display markers: for WHERE, ON, GROUP BY and ORDER BY."""
        return strip_display(self.translate(node))

    def unsupported(self, node: exp.Expression, what: str, hint: str = "") -> ParseException:
        """The error for SQL Quiver cannot run yet: names the construct, quotes it, says what to do instead."""
        return ParseException(
            f"{what} is not supported in Quiver SQL yet: {node.sql(dialect='spark')!r}" + (f"; {hint}" if hint else "")
        )

    # -- names and literals

    def _column(self, node: exp.Column) -> Expr:
        parts = [p.name for p in node.parts]
        if isinstance(node.this, exp.Star):
            return UnresolvedStar(".".join(parts[:-1]) or None)
        return UnresolvedColumn(tuple(parts))

    def _identifier(self, node: exp.Identifier) -> Expr:
        return UnresolvedColumn((node.name,))

    def _dot(self, node: exp.Dot) -> Expr:
        if all(isinstance(p, (exp.Identifier, exp.Column)) for p in (node.this, node.expression)):
            base = self.translate(node.this)
            if isinstance(base, UnresolvedColumn):
                return UnresolvedColumn(base.parts + (node.expression.name,))
        return ScalarFunction("get_field", (self.translate(node.this), Literal(node.expression.name, T.StringType())))

    def _star(self, node: exp.Star) -> Expr:
        return UnresolvedStar(None)

    def _paren(self, node: exp.Paren) -> Expr:
        return self.translate(node.this)

    def _alias(self, node: exp.Alias) -> Expr:
        return Alias(self.clean(node.this), node.alias)

    def _literal(self, node: exp.Literal) -> Expr:
        if node.is_string:
            return Literal(node.this, T.StringType())
        return number_literal(node.this)

    def _boolean(self, node: exp.Boolean) -> Expr:
        return Literal(bool(node.this), T.BooleanType())

    def _null(self, node: exp.Null) -> Expr:
        return Literal(None, T.NullType())

    def _hexstring(self, node: exp.HexString) -> Expr:
        return Literal(bytes.fromhex(node.this), T.BinaryType())

    def _neg(self, node: exp.Neg) -> Expr:
        inner = node.this
        if isinstance(inner, exp.Literal) and not inner.is_string:
            return number_literal("-" + inner.this)
        child = self.translate(inner)
        # Spark folds the sign into a suffixed literal too: -10L is the bigint literal -10.
        if isinstance(child, Literal) and isinstance(inner, (exp.Cast, exp.TryCast)) and child.value is not None \
                and isinstance(child.data_type, T.NumericType):
            return Literal(-child.value, child.data_type)
        return Negate(child, sql_operator=True)

    def _cast(self, node: exp.Cast) -> Expr:
        typed = self._literal_with_type(node)
        if typed is not None:
            return typed
        # sqlglot reads Spark's CAST as TryCast too (Spark 3 casts gave NULL); only TRY_CAST is marked safe
        return Cast(self.translate(node.this), data_type(node.to), is_try=bool(node.args.get("safe")))

    def _literal_with_type(self, node: exp.Cast) -> Literal | None:
        """`10L`, `1.5D`, `1.5BD`, `DATE '2024-01-01'`: sqlglot reads these as casts; Spark as literals."""
        lit = node.this
        if not isinstance(lit, exp.Literal):
            return None
        start, end = lit.meta.get("start"), lit.meta.get("end")
        if start is None or end is None:
            # sqlglot builds the digits of `1.5BD` as a synthetic string literal without a position.
            if lit.is_string and node.to.is_type(exp.DataType.Type.DECIMAL):
                return decimal_literal(lit.this)
            return None
        source = self.text[start:end + 1]
        suffixed = _SUFFIXED_NUMBER.fullmatch(source)
        if suffixed and not lit.is_string:
            return suffixed_literal(suffixed.group(1), suffixed.group(2).upper())
        keyword = _TYPED_LITERAL_KEYWORD.search(self.text[:start])
        if lit.is_string and keyword:
            return typed_literal(keyword.group(1).upper(), lit.this)
        return None

    # -- operators

    def _arithmetic(self, node: exp.Binary, op: str) -> Expr:
        left, right = node.this, node.expression
        if op in ("+", "-") and isinstance(right, exp.Interval):
            return self._interval_arithmetic(node, left, right, -1 if op == "-" else 1)
        if op == "+" and isinstance(left, exp.Interval):
            return self._interval_arithmetic(node, right, left, 1)
        return BinaryArithmetic(op, self.translate(left), self.translate(right))

    def _interval_arithmetic(self, node: exp.Binary, start: exp.Expression, interval: exp.Interval,
                             sign: int) -> Expr:
        """`d + INTERVAL '3' MONTH`: a date stays a date (months clamped to the month's end), a timestamp
        moves in time."""
        months, days, micros = interval_parts(interval, self)
        base = self.translate(start)
        call = ScalarFunction("interval_add", (base, Literal(sign * months, T.IntegerType()),
                                               Literal(sign * days, T.IntegerType()),
                                               Literal(sign * micros, T.LongType())))
        text = interval.sql(dialect="spark")
        return SparkDisplay(call, (base,),
                            "{} " + ("-" if sign < 0 else "+") + " " + text.replace("{", "{{").replace("}", "}}"))

    def _comparison(self, node: exp.Binary, op: str) -> Expr:
        return Comparison(op, self.translate(node.this), self.translate(node.expression))

    def _neq(self, node: exp.NEQ) -> Expr:
        return Not(Comparison("=", self.translate(node.this), self.translate(node.expression)))

    def _bitwise(self, node: exp.Binary, op: str) -> Expr:
        left, right = self.translate(node.this), self.translate(node.expression)
        return SparkDisplay(ScalarFunction(op, (left, right)), (left, right), "({} " + op + " {})")

    def _bitwisenot(self, node: exp.BitwiseNot) -> Expr:
        child = self.translate(node.this)
        return SparkDisplay(ScalarFunction("~", (child,)), (child,), "~{}")

    def _intdiv(self, node: exp.IntDiv) -> Expr:
        left, right = self.translate(node.this), self.translate(node.expression)
        return SparkDisplay(ScalarFunction("div", (left, right)), (left, right), "({} div {})")

    def _dpipe(self, node: exp.DPipe) -> Expr:
        return ScalarFunction("concat", (self.translate(node.this), self.translate(node.expression)))

    def _and(self, node: exp.And) -> Expr:
        return And(self.translate(node.this), self.translate(node.expression))

    def _or(self, node: exp.Or) -> Expr:
        return Or(self.translate(node.this), self.translate(node.expression))

    def _not(self, node: exp.Not) -> Expr:
        inner = node.this
        if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
            return IsNotNull(self.translate(inner.this))
        return Not(self.translate(inner))

    def _is(self, node: exp.Is) -> Expr:
        child = self.translate(node.this)
        target = node.expression
        if isinstance(target, exp.Null):
            return IsNull(child)
        if isinstance(target, exp.Boolean):
            # x IS TRUE never yields null: it is x <=> true.
            word = "TRUE" if target.this else "FALSE"
            return SparkDisplay(Comparison("<=>", child, Literal(bool(target.this), T.BooleanType())),
                                (child,), "({} IS " + word + ")")
        raise self.unsupported(node, "IS with something other than NULL, TRUE or FALSE")

    def _between(self, node: exp.Between) -> Expr:
        x, low, high = self.translate(node.this), self.translate(node.args["low"]), self.translate(node.args["high"])
        both = And(Comparison(">=", x, low), Comparison("<=", x, high))
        return self._maybe_negated(node, SparkDisplay(both, (x, low, high), "between({}, {}, {})"))

    def _in(self, node: exp.In) -> Expr:
        if node.args.get("unnest") is not None:
            raise self.unsupported(node, "IN UNNEST(...)")
        query = node.args.get("query")
        if query is not None:
            probe = node.this.expressions if isinstance(node.this, exp.Tuple) else [node.this]
            plan = self._subquery_plan(query, "IN (subquery)", columns=len(probe))
            values = tuple(self.translate(v) for v in probe)
            return self._maybe_negated(node, InSubquery(plan, new_expr_id(), values))
        values = tuple(self.translate(v) for v in node.expressions)
        if not values:
            raise ParseException(f"IN needs at least one value: {node.sql(dialect='spark')!r}")
        return self._maybe_negated(node, In(self.translate(node.this), values))

    def _pattern(self, node: exp.Binary, name: str) -> Expr:
        call = ScalarFunction(name, (self.translate(node.this), self.translate(node.expression)))
        return self._maybe_negated(node, call)

    def _escape(self, node: exp.Escape) -> Expr:
        like = node.this
        if type(like) not in _PATTERNS:
            raise self.unsupported(node, "ESCAPE outside LIKE")
        call = ScalarFunction(_PATTERNS[type(like)], (self.translate(like.this), self.translate(like.expression),
                                                      self.translate(node.expression)))
        return self._maybe_negated(like, call)

    def _maybe_negated(self, node: exp.Expression, e: Expr) -> Expr:
        return Not(e) if node.args.get("negate") else e

    # -- conditionals

    def _case(self, node: exp.Case) -> Expr:
        subject = self.translate(node.this) if node.this is not None else None
        conditions, values = [], []
        for branch in node.args.get("ifs") or []:
            cond = self.translate(branch.this)
            conditions.append(Comparison("=", subject, cond) if subject is not None else cond)
            values.append(self.translate(branch.args["true"]))
        default = node.args.get("default")
        return CaseWhen(tuple(conditions), tuple(values), self.translate(default) if default is not None else None)

    def _if(self, node: exp.If) -> Expr:
        cond, yes = self.translate(node.this), self.translate(node.args["true"])
        no_node = node.args.get("false")
        no = self.translate(no_node) if no_node is not None else Literal(None, T.NullType())
        return SparkDisplay(CaseWhen((cond,), (yes,), no), (cond, yes, no), "(IF({}, {}, {}))")

    # -- functions

    def _anonymous(self, node: exp.Anonymous) -> Expr:
        name = node.name.lower()
        args = list(node.expressions)
        registered = self.functions(name) if self.functions is not None else None
        if registered is not None:  # spark.udf.register'ed functions come first, as Spark's temporary functions
            return registered.call(tuple(self.translate(a) for a in args))
        if name in WINDOW_FUNCTIONS:
            raise AnalysisException(f"window function {node.sql(dialect='spark')} requires an OVER clause, e.g. "
                                    f"{name}({'x' if args else ''}) OVER (PARTITION BY k ORDER BY x)")
        if name in AGGREGATES:
            return self._aggregate(node, name, args)
        if name in _UNSUPPORTED_AGGREGATES:
            raise self.unsupported(node, f"the aggregate function {name}()",
                                    f"supported aggregates: {', '.join(sorted(AGGREGATES))}")
        if any(isinstance(a, exp.Distinct) for a in args):
            raise ParseException(f"DISTINCT is only valid inside an aggregate function, not in {name}(): "
                                 f"{node.sql(dialect='spark')!r}")
        if any(isinstance(a, exp.Star) for a in args):
            raise ParseException(f"'*' is only valid as count(*), not in {name}(): {node.sql(dialect='spark')!r}")
        if name in _CAST_FUNCTIONS and len(args) == 1:
            return Cast(self.translate(args[0]), T.parse_data_type(_CAST_FUNCTIONS[name]))
        if name == "position" and len(args) == 1 and isinstance(args[0], exp.In) and args[0].args.get("field"):
            # POSITION(sub IN s) is Spark's locate(sub, s); the catalog shows the default start, 1.
            return ScalarFunction("locate", (self.translate(args[0].this), self.translate(args[0].args["field"])))
        if name in _TRIM_FUNCTIONS and len(args) == 2:
            # SQL's two-argument trim(chars, s) names the characters first; our trim(s, chars) follows F.trim.
            args = [args[1], args[0]]
        if name in _TRY_OPERATORS and len(args) == 2:
            left, right = (self.translate(a) for a in args)
            return BinaryArithmetic(_TRY_OPERATORS[name], left, right, is_try=True)
        if name in ("struct", "arrays_zip"):
            # the struct field names come from the argument columns' names, as in F.struct
            return (builder.struct_call if name == "struct" else builder.zip_call)(
                tuple(self.translate(a) for a in args))
        return ScalarFunction(name, tuple(self.translate(a) for a in args))

    def _aggregate(self, node: exp.Anonymous, name: str, args: list[exp.Expression]) -> Expr:
        distinct = False
        if len(args) == 1 and isinstance(args[0], exp.Distinct):
            distinct, args = True, list(args[0].expressions)
        ignore_nulls = False
        if name in ("first", "last", "first_value", "last_value", "any_value") and len(args) == 2:
            flag = args.pop()
            if not isinstance(flag, exp.Boolean):
                raise ParseException(f"the second argument of {name}() must be true or false (ignoreNulls), "
                                     f"got {flag.sql(dialect='spark')!r}")
            ignore_nulls = bool(flag.this)
        internal = AGGREGATES[name]
        display = name if name != internal else None
        if name == "count" and not distinct and len(args) == 1 and _counts_rows(args[0]):
            return AggregateFunction("count", ())
        if name == "approx_count_distinct":
            distinct, args = True, args[:1]
        if any(isinstance(a, exp.Star) for a in args):
            raise ParseException(f"'*' is only valid as count(*), not in {name}(): {node.sql(dialect='spark')!r}")
        if not args:
            raise ParseException(f"{name}() needs an argument, e.g. {name}(x)")
        translated = tuple(self.translate(a) for a in args)
        if any(contains_window(a) for a in translated):
            raise AnalysisException(f"a window function cannot be used inside the aggregate function {name}(): "
                                    f"{node.sql(dialect='spark')!r}; compute the window in a subquery first")
        return AggregateFunction(internal, translated, distinct, ignore_nulls, display, is_try=name.startswith("try_"))

    def _ignorenulls(self, node: exp.IgnoreNulls) -> Expr:
        inner = self.translate(node.this)
        if isinstance(inner, AggregateFunction) and inner.name in ("first", "last", "any_value"):
            return AggregateFunction(inner.name, inner.args, inner.distinct, True, _null_clause_display(inner))
        raise self.unsupported(node, "IGNORE NULLS outside first(), last() and any_value()")

    def _respectnulls(self, node: exp.RespectNulls) -> Expr:
        inner = self.translate(node.this)
        if isinstance(inner, AggregateFunction) and inner.name in ("first", "last", "any_value"):
            return AggregateFunction(inner.name, inner.args, inner.distinct, False, _null_clause_display(inner))
        return inner

    def _substring(self, node: exp.Substring) -> Expr:
        args = [node.this, node.args.get("start"), node.args.get("length")]
        return ScalarFunction(node.meta.get("spark_name", "substring"),
                              tuple(self.translate(a) for a in args if a is not None))

    def _trim(self, node: exp.Trim) -> Expr:
        # TRIM(LEADING c FROM s) is ltrim(s, c); the catalog shows it as Spark does.
        position = (node.args.get("position") or "").upper()
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
        args = [node.this, node.args.get("expression")]
        return ScalarFunction(name, tuple(self.translate(a) for a in args if a is not None))

    def _extract(self, node: exp.Extract) -> Expr:
        field = node.this.name.upper()
        if field not in _EXTRACT_FIELDS:
            raise self.unsupported(node, f"EXTRACT({field} FROM ...)",
                                    f"valid fields: {', '.join(sorted(set(_EXTRACT_FIELDS)))}")
        source = self.translate(node.expression)
        call = ScalarFunction(_EXTRACT_FIELDS[field], (source,))
        return SparkDisplay(call, (source,), "extract(" + node.this.name + " FROM {})")

    def _generic_function(self, node: exp.Func) -> Expr:
        """A sqlglot function class without special handling: Spark's name is its SQL name."""
        args: list[Expr] = []
        for key in node.arg_types:
            value = node.args.get(key)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, exp.Expression):
                    args.append(self.translate(item))
        return ScalarFunction(node.sql_name().lower(), tuple(args))

    # -- what Quiver SQL does not support yet, with what to do instead

    def _subquery(self, node: exp.Subquery) -> Expr:
        return scalar_subquery(self._subquery_plan(node, "a scalar subquery", columns=1))

    def _exists(self, node: exp.Exists) -> Expr:
        return Exists(self._subquery_plan(node.this, "EXISTS (subquery)", columns=None), new_expr_id())

    def _subquery_plan(self, node: exp.Expression, what: str, columns: int | None) -> LogicalPlan:
        """The subquery's plan; `columns` is how many columns it must return (None: any)."""
        if self.subquery_plan is None:
            raise self.unsupported(node, what,
                                   "subqueries are part of spark.sql() queries, not of F.expr() or filter(str)")
        plan = self.subquery_plan(node)
        if columns is not None and len(plan.output) != columns:
            want = "exactly one column" if columns == 1 else f"{columns} columns, one per value on the left of IN"
            raise AnalysisException(
                f"{what} must return {want}, but returns {len(plan.output)} "
                f"({', '.join(a.name for a in plan.output)}): {node.sql(dialect='spark')!r}"
            )
        return plan

    def _any(self, node: exp.Any) -> Expr:
        raise self.unsupported(node, "ANY (subquery)", _SUBQUERY_HINT)

    def _all(self, node: exp.All) -> Expr:
        raise self.unsupported(node, "ALL (subquery)", _SUBQUERY_HINT)

    def _window(self, node: exp.Window) -> Expr:
        return translate_window(self, node)

    def _filter(self, node: exp.Filter) -> Expr:
        """`agg(x) FILTER (WHERE c)` as `agg(CASE WHEN c THEN x END)`, named as Spark names it.

        Exact for aggregates that skip nulls; first/last/any_value keep nulls unless told to
        ignore them, so there a filtered-out row would still count and the clause is refused.
        """
        aggregate = self.translate(node.this)
        condition = self.translate(node.expression.this)
        if not isinstance(aggregate, AggregateFunction):
            raise self.unsupported(node, "FILTER (WHERE ...) after something other than an aggregate function")
        if aggregate.name in ("first", "last", "any_value") and not aggregate.ignore_nulls:
            raise self.unsupported(node, f"FILTER (WHERE ...) on {aggregate.name}() without IGNORE NULLS",
                                   f"write {aggregate.name}(CASE WHEN cond THEN x END, true)")
        args = aggregate.args or (Literal(1, T.IntegerType()),)
        filtered = replace(aggregate, args=tuple(CaseWhen((condition,), (a,)) for a in args),
                           display=aggregate.display or aggregate.name)
        return Alias(filtered, f"{aggregate.sql()} FILTER (WHERE {condition.sql()})")

    def _lambda(self, node: exp.Lambda) -> Expr:
        raise self.unsupported(node, "a lambda function (x -> ...)")

    def _interval(self, node: exp.Interval) -> Expr:
        raise self.unsupported(node, "an INTERVAL value outside date arithmetic",
                                "add it to or subtract it from a date or timestamp: d + INTERVAL '3' MONTH")

    def _bracket(self, node: exp.Bracket) -> Expr:
        """`arr[i]` (0-based, null outside the array) and `m[key]`."""
        if len(node.expressions) != 1:
            raise self.unsupported(node, "a subscript with several indexes")
        return ScalarFunction("element_at_index", (self.translate(node.this), self.translate(node.expressions[0])))

    def _tuple(self, node: exp.Tuple) -> Expr:
        raise self.unsupported(node, "a row value (a, b)")


# sqlglot node class -> the ExpressionTranslator method that translates it.
_HANDLERS: dict[type, str] = {
    exp.Column: "_column", exp.Identifier: "_identifier", exp.Dot: "_dot", exp.Star: "_star", exp.Paren: "_paren",
    exp.Alias: "_alias", exp.Literal: "_literal", exp.Boolean: "_boolean", exp.Null: "_null",
    exp.HexString: "_hexstring", exp.Neg: "_neg", exp.Cast: "_cast", exp.TryCast: "_cast", exp.NEQ: "_neq",
    exp.BitwiseNot: "_bitwisenot", exp.IntDiv: "_intdiv", exp.DPipe: "_dpipe", exp.And: "_and", exp.Or: "_or",
    exp.Not: "_not", exp.Is: "_is", exp.Between: "_between", exp.In: "_in", exp.Escape: "_escape",
    exp.Case: "_case", exp.If: "_if", exp.Anonymous: "_anonymous", exp.IgnoreNulls: "_ignorenulls",
    exp.RespectNulls: "_respectnulls", exp.Substring: "_substring",
    exp.Trim: "_trim", exp.Extract: "_extract", exp.Subquery: "_subquery", exp.Exists: "_exists",
    exp.Any: "_any", exp.All: "_all", exp.Window: "_window", exp.Filter: "_filter", exp.Lambda: "_lambda",
    exp.Interval: "_interval", exp.Bracket: "_bracket", exp.Tuple: "_tuple",
}


def _null_clause_display(f: AggregateFunction) -> str | None:
    """Spark names `first_value(x) IGNORE NULLS` (and RESPECT NULLS) first(x): the clause drops the alias."""
    return None if f.display in ("first_value", "last_value") else f.display


def _counts_rows(arg: exp.Expression) -> bool:
    """count(*) and count(<non-null literal>) count rows (Spark rewrites both to count(1))."""
    return isinstance(arg, exp.Star) or (isinstance(arg, (exp.Literal, exp.Boolean)))


# ---------------------------------------------------------------- literals and types


def number_literal(text: str) -> Literal:
    """A numeric literal typed as Spark types it: 1 int, 10000000000 bigint, 1.5 decimal(2,1), 1e3 double."""
    digits = text.lstrip("+-")
    if digits.isdigit():
        value = int(text)
        if -(2**31) <= value < 2**31:
            return Literal(value, T.IntegerType())
        if -(2**63) <= value < 2**63:
            return Literal(value, T.LongType())
        if len(digits) <= 38:
            return Literal(_decimal.Decimal(value), T.DecimalType(len(digits), 0))
        return Literal(float(text), T.DoubleType())
    if "e" in text.lower():
        return Literal(float(text), T.DoubleType())
    return decimal_literal(text)


def decimal_literal(text: str) -> Literal:
    """`1.50` as decimal(3,2); beyond 38 digits Spark falls back to double."""
    value = _decimal.Decimal(text)
    sign, digits, exponent = value.as_tuple()
    scale = max(0, -int(exponent))
    precision = max(len(digits), scale, 1)
    if precision > 38:
        return Literal(float(value), T.DoubleType())
    return Literal(value, T.DecimalType(precision, scale))


_SUFFIX_TYPES: dict[str, tuple[type[T.DataType], Callable]] = {
    "L": (T.LongType, int), "S": (T.ShortType, int), "Y": (T.ByteType, int),
    "D": (T.DoubleType, float), "F": (T.FloatType, float),
}


def suffixed_literal(digits: str, suffix: str) -> Literal:
    """`10L` bigint, `1S` smallint, `1Y` tinyint, `1.5D` double, `1.5F` float, `1.5BD` decimal."""
    if suffix == "BD":
        return decimal_literal(digits)
    dtype, convert = _SUFFIX_TYPES[suffix]
    try:
        value = convert(digits)
    except ValueError:
        raise ParseException(f"invalid {dtype().simpleString()} literal {digits}{suffix}; "
                             f"{suffix} marks an integral literal such as 10{suffix}") from None
    return Literal(value, dtype())


def typed_literal(keyword: str, text: str) -> Literal:
    """`DATE '2024-01-31'` and `TIMESTAMP '2024-01-31 10:00:00'` as date / timestamp literals."""
    if keyword == "DATE":
        m = re.fullmatch(r"\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*", text)
        try:
            if not m:
                raise ValueError(text)
            return Literal(_dt.date(int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)), T.DateType())
        except ValueError:
            raise ParseException(f"invalid DATE literal '{text}'; write it as DATE 'yyyy-mm-dd'") from None
    try:
        value = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ParseException(
            f"invalid {keyword} literal '{text}'; write it as {keyword} 'yyyy-mm-dd hh:mm:ss[.ffffff]'"
        ) from None
    if keyword == "TIMESTAMP_NTZ":
        return Literal(value.replace(tzinfo=None), T.TimestampNTZType())
    if value.tzinfo is not None:
        # An explicit offset names an instant: store it in UTC like every other timestamp.
        return Literal(value.astimezone(_dt.timezone.utc).replace(tzinfo=None), T.TimestampType())
    # Without one it is a wall-clock time in the session time zone.
    return Literal(value, T.TimestampType(), wall_clock=True)


def data_type(node: exp.DataType) -> T.DataType:
    """Our type for a sqlglot type node (CAST targets): `DECIMAL(10, 2)`, `ARRAY<INT>`, `STRUCT<a: INT>`."""
    return T.parse_data_type(node.sql(dialect="spark"))


def sort_order(e: Expr, node: exp.Ordered) -> SortOrder:
    """A SortOrder for `e` with the direction and null placement of an ORDER BY item."""
    ascending = not node.args.get("desc")
    nulls_first = node.args.get("nulls_first")
    return SortOrder(e, ascending, bool(nulls_first) if nulls_first is not None else None)


__all__ = [
    "parse_expression", "parse_sql", "ExpressionTranslator", "number_literal", "data_type", "sort_order", "AGGREGATES",
]


# Interval units -> (months, days, microseconds) per unit.
_INTERVAL_UNITS: dict[str, tuple[int, int, int]] = {
    "YEAR": (12, 0, 0), "MONTH": (1, 0, 0), "WEEK": (0, 7, 0), "DAY": (0, 1, 0),
    "HOUR": (0, 0, 3_600_000_000), "MINUTE": (0, 0, 60_000_000), "SECOND": (0, 0, 1_000_000),
    "MILLISECOND": (0, 0, 1_000), "MICROSECOND": (0, 0, 1),
}
_INTERVAL_PART = re.compile(r"\s*([+-]?\d+(?:\.\d+)?)\s*([A-Za-z]+)")


def _interval_unit(word: str) -> tuple[int, int, int] | None:
    word = word.upper()
    return _INTERVAL_UNITS.get(word) or (_INTERVAL_UNITS.get(word[:-1]) if word.endswith("S") else None)


def interval_parts(node: exp.Interval, exprs: ExpressionTranslator) -> tuple[int, int, int]:
    """An INTERVAL literal as (months, days, microseconds): `INTERVAL '90' DAY`, `INTERVAL 3 MONTHS`,
    `INTERVAL '1 year 2 days'`."""
    value = node.this
    if not isinstance(value, exp.Literal):
        raise exprs.unsupported(node, "an INTERVAL whose amount is not a literal",
                                "use date_add(d, n) or add_months(d, n)")
    unit = node.args.get("unit")
    pairs = [(value.this, unit.name)] if unit is not None else _INTERVAL_PART.findall(str(value.this))
    if not pairs or (unit is None and _INTERVAL_PART.sub("", str(value.this)).strip()):
        raise ParseException(f"cannot read the interval {node.sql(dialect='spark')!r}; write it as "
                             f"INTERVAL '<number>' <unit> with unit one of {', '.join(_INTERVAL_UNITS)}")
    months = days = micros = 0
    for amount, word in pairs:
        per = _interval_unit(word)
        if per is None:
            raise ParseException(f"unknown interval unit {word!r} in {node.sql(dialect='spark')!r}; "
                                 f"valid units: {', '.join(_INTERVAL_UNITS)}")
        number = _decimal.Decimal(str(amount).strip())
        if number != number.to_integral_value() and per[2] == 0:
            raise ParseException(f"interval {word} amounts must be whole numbers: {node.sql(dialect='spark')!r}")
        months += int(number) * per[0]
        days += int(number) * per[1]
        micros += int(number * per[2])
    return months, days, micros
