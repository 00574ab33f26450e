"""JSON Schemas compiled into Python closures: jsonschema's verdicts and errors, faster.

The Kubernetes OpenAPI schemas and the CRDs use a small part of JSON Schema
(``type``, ``properties``, ``additionalProperties``, ``required``, ``items``,
``enum``, ``$ref``, bounds, ``pattern``, ``anyOf``/``oneOf`` for int-or-string).
Each schema node is compiled once into a closure that checks an instance
against exactly those keywords and reports the same
:class:`jsonschema.ValidationError` (message, keyword, instance, path) that
jsonschema's own ``iter_errors`` reports — in the same order once sorted by
path, which is how the checks report them. Validating a Pod this way takes
tens of microseconds instead of milliseconds.

Anything else — a keyword outside that part, a failed ``anyOf``/``oneOf``
(whose best error jsonschema picks by relevance) — is handed to the jsonschema
validator the schema came with, for that node only, so the errors stay
jsonschema's exactly. ``tests/check/test_compiled.py`` compares the two on
mutated objects.

Nothing is compiled before it is needed: a node is compiled the first time an
instance reaches it, so checking a small job against a CRD of thousands of nodes
compiles the few dozen it uses. jsonschema itself (60 ms to import) is imported only
when a node is handed to it or an error is reported: a valid object never needs it
when the fallback validator is given as a factory (with its draft's ``keywords``).
"""

from __future__ import annotations

import numbers
import re
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "DRAFT7_KEYWORDS",
    "DRAFT202012_KEYWORDS",
    "CompiledSchema",
    "compile_schema",
    "without_descriptions",
]

DRAFT7_KEYWORDS = frozenset(
    "$ref additionalItems additionalProperties allOf anyOf const contains dependencies enum "  # noqa: SIM905
    "exclusiveMaximum exclusiveMinimum format if items maxItems maxLength maxProperties maximum "
    "minItems minLength minProperties minimum multipleOf not oneOf pattern patternProperties "
    "properties propertyNames required type uniqueItems".split()
)
"""The keywords JSON Schema draft 7 defines (``jsonschema.Draft7Validator.VALIDATORS``; a
test holds the two equal): any other key of a schema node asserts nothing."""

DRAFT202012_KEYWORDS = (DRAFT7_KEYWORDS - {"additionalItems", "dependencies"}) | {
    "$dynamicRef",
    "dependentRequired",
    "dependentSchemas",
    "prefixItems",
    "unevaluatedItems",
    "unevaluatedProperties",
}
"""The keywords of draft 2020-12 (``jsonschema.Draft202012Validator.VALIDATORS``)."""

# Where a schema holds schemas: one (``not``), a list of them (``allOf``; ``items`` in
# draft 7's tuple form) or a map of them (``properties``).
_ONE_SCHEMA = frozenset(
    "additionalItems additionalProperties contains else if items not propertyNames then "  # noqa: SIM905
    "unevaluatedItems unevaluatedProperties".split()
)
_SCHEMA_LISTS = frozenset(["allOf", "anyOf", "oneOf", "prefixItems", "items"])
_SCHEMA_MAPS = frozenset(
    ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"]
)


def without_descriptions(schema: Any) -> Any:
    """``schema`` with the ``description`` of every schema in it left out: an annotation
    that asserts nothing and is three quarters of a Kubernetes schema's bytes.

    Only schemas lose it: a property named ``description`` stays, as does any
    ``description`` inside a value (an ``enum``, a ``default``)."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description" and isinstance(value, str):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, Mapping):
            value = {name: without_descriptions(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [without_descriptions(sub) for sub in value]
        elif key in _ONE_SCHEMA:
            value = without_descriptions(value)
        out[key] = value
    return out


# A path is built as a linked list (key, parent) so descending costs one small
# tuple; it is turned into a list only when an error is reported.
Path = tuple[Any, ...] | None
Check = Callable[[Any, Path, list["ValidationError"]], None]

_IGNORED = {"format", "description", "default", "title", "$schema", "$id", "$defs"}
"""Keywords that assert nothing here (``format``: no format checker, as in jsonschema's
default)."""


def json_equal(one: Any, other: Any) -> bool:
    """Equality as JSON Schema defines it (``enum``, ``const``): ``true`` is not ``1``,
    ``1.0`` is ``1``, and containers compare member by member.

    Written here rather than imported from ``jsonschema._utils``, a private module
    that may move in any release.
    """
    if isinstance(one, bool) or isinstance(other, bool):
        return isinstance(one, bool) and isinstance(other, bool) and one == other
    if isinstance(one, Mapping) and isinstance(other, Mapping):
        return one.keys() == other.keys() and all(json_equal(one[k], other[k]) for k in one)
    if isinstance(one, list | tuple) and isinstance(other, list | tuple):
        return len(one) == len(other) and all(
            json_equal(a, b) for a, b in zip(one, other, strict=True)
        )
    if isinstance(one, list | tuple | Mapping) or isinstance(other, list | tuple | Mapping):
        return False
    return bool(one == other)


def _path_list(path: Path) -> deque[Any]:
    parts: deque[Any] = deque()
    while path is not None:
        parts.appendleft(path[0])
        path = path[1]
    return parts


def _error(
    message: str,
    keyword: str,
    value: Any,
    instance: Any,
    schema: Any,
    path: Path,
    compiler: _Compiler,
) -> ValidationError:
    from jsonschema.exceptions import ValidationError

    return ValidationError(
        message,
        validator=keyword,
        validator_value=value,
        instance=instance,
        schema=schema,
        path=_path_list(path),
        type_checker=compiler.fallback.TYPE_CHECKER,
    )


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


_PLAIN_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "object": dict,
    "array": list,
    "boolean": bool,
    "null": type(None),
}


def _type_test(types: list[str]) -> Callable[[Any], bool] | None:
    """A predicate for ``type``; None when a type name is unknown (left to jsonschema)."""
    plain: list[type] = []
    numeric: list[Callable[[Any], bool]] = []
    for name in types:
        if name in _PLAIN_TYPES:
            found = _PLAIN_TYPES[name]
            plain += list(found) if isinstance(found, tuple) else [found]
        elif name == "integer":
            numeric.append(_is_integer)
        elif name == "number":
            numeric.append(_is_number)
        else:
            return None
    classes = tuple(plain)
    if not numeric:
        return lambda value: isinstance(value, classes)
    return lambda value: isinstance(value, classes) or any(test(value) for test in numeric)


def _nothing(value: Any, path: Path, out: list[ValidationError]) -> None:
    """The check of a schema that accepts everything."""


_EXACT: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "object": (dict,),
    "array": (list,),
    "boolean": (bool,),
    "null": (type(None),),
    "integer": (int,),
    "number": (int, float),
}


class _Compiler:
    """Compiles the nodes of one root schema; ``$ref`` targets once each (cycles allowed)."""

    def __init__(
        self,
        resolve: Callable[[str], Any],
        make_fallback: Callable[[], Validator],
        keywords: Collection[str],
    ) -> None:
        self.resolve = resolve
        self._make_fallback = make_fallback
        self._fallback: Validator | None = None
        self.ref_overrides = "$dynamicRef" not in keywords  # draft 7 and older
        self.supported = frozenset(keywords)
        self.refs: dict[str, Check] = {}

    @property
    def fallback(self) -> Validator:
        """The jsonschema validator of the root schema, made when first needed."""
        if self._fallback is None:
            self._fallback = self._make_fallback()
        return self._fallback

    def delegate(self, node: Any) -> Check:
        """jsonschema validates this node; its errors get the path of where it sits."""
        made: list[Validator] = []

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if not made:
                made.append(self.fallback.evolve(schema=node))
            prefix = _path_list(path)
            for error in made[0].iter_errors(value):
                error.path.extendleft(reversed(prefix))
                out.append(error)

        return check

    def ref(self, target: str) -> Check:
        if target not in self.refs:
            node = self.resolve(target)
            cell: list[Check] = []

            def forward(value: Any, path: Path, out: list[ValidationError]) -> None:
                cell[0](value, path, out)

            self.refs[target] = forward
            cell.append(self.compile(node))
        return self.refs[target]

    def compile(self, node: Any) -> Check:
        if node is True or node == {}:
            return _nothing
        if node is False or not isinstance(node, Mapping):
            return self.delegate(node)
        keywords = dict(node)
        if self.ref_overrides and "$ref" in keywords:
            keywords = {"$ref": keywords["$ref"]}
        unknown = [
            k
            for k in keywords
            if k in self.supported and k not in self._handlers and k not in _IGNORED
        ]
        if unknown:
            return self.delegate(node)
        checks: list[Check] = []
        for keyword, value in keywords.items():
            handler = self._handlers.get(keyword)
            if handler is not None:
                made = handler(self, node, value)
                if made is None:
                    return self.delegate(node)
                checks.append(made)
        if len(checks) == 1:
            return checks[0]

        def all_of(value: Any, path: Path, out: list[ValidationError]) -> None:
            for check in checks:
                check(value, path, out)

        return all_of

    # ----- one method per keyword; each returns a check, or None to delegate -----

    def _type(self, node: Any, types: Any) -> Check | None:
        names = types if isinstance(types, list) else [types]
        test = _type_test(names)
        if test is None:
            return None
        reprs = ", ".join(repr(t) for t in names)
        compiler = self

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if not test(value):
                message = f"{value!r} is not of type {reprs}"
                out.append(_error(message, "type", types, value, node, path, compiler))

        return check

    def _enum(self, node: Any, enums: Any) -> Check | None:
        strings = {e for e in enums if isinstance(e, str)}
        compiler = self

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if isinstance(value, str) and value in strings:
                return
            if all(not json_equal(each, value) for each in enums):
                message = f"{value!r} is not one of {enums!r}"
                out.append(_error(message, "enum", enums, value, node, path, compiler))

        return check

    def _member(self, node: Any) -> tuple[frozenset[type] | None, Check]:
        """A sub-schema's check, and the Python types that pass it outright (if any)."""
        return self.fast_types(node), self.compile(node)

    def _properties(self, node: Any, properties: Any) -> Check | None:
        """``properties`` and a schema-valued ``additionalProperties``, by the instance's keys.

        A member is compiled when a key first names it: most of a CRD's members are
        never set by the objects it checks."""
        if "patternProperties" in node:
            return None
        members: dict[Any, tuple[frozenset[type] | None, Check]] = {}
        additional = node.get("additionalProperties", True)
        extra_node = additional if isinstance(additional, Mapping) else None
        extra: list[tuple[frozenset[type] | None, Check]] = []
        member = self._member

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if isinstance(value, dict):
                for key, item in value.items():
                    entry = members.get(key)
                    if entry is None:
                        if key in properties:
                            entry = members[key] = member(properties[key])
                        elif extra_node is None:
                            continue
                        else:
                            if not extra:
                                extra.append(member(extra_node))
                            entry = extra[0]
                    fast, sub = entry
                    if fast is None or type(item) not in fast:
                        sub(item, (key, path), out)

        return check

    def _additional(self, node: Any, additional: Any) -> Check | None:
        if "patternProperties" in node:
            return None
        if additional is not False:
            if "properties" in node:
                return _nothing  # descended by _properties
            return self._properties(node, {})
        known = set(node.get("properties") or {})
        compiler = self

        def closed(value: Any, path: Path, out: list[ValidationError]) -> None:
            if isinstance(value, dict) and not known.issuperset(value):
                extras = sorted((k for k in value if k not in known), key=str)
                listed = ", ".join(repr(k) for k in extras)
                verb = "was" if len(extras) == 1 else "were"
                message = f"Additional properties are not allowed ({listed} {verb} unexpected)"
                out.append(
                    _error(message, "additionalProperties", False, value, node, path, compiler)
                )

        return closed

    def _required(self, node: Any, required: Any) -> Check | None:
        compiler = self

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if isinstance(value, dict):
                for name in required:
                    if name not in value:
                        message = f"{name!r} is a required property"
                        out.append(
                            _error(message, "required", required, value, node, path, compiler)
                        )

        return check

    def _items(self, node: Any, items: Any) -> Check | None:
        if not isinstance(items, (Mapping, bool)):
            return None  # tuple-style items (draft 7): left to jsonschema
        made: list[tuple[frozenset[type] | None, Check]] = []  # compiled at the first list

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if isinstance(value, list):
                if not made:
                    made.append(self._member(items))
                fast, sub = made[0]
                for index, item in enumerate(value):
                    if fast is None or type(item) not in fast:
                        sub(item, (index, path), out)

        return check

    def _ref(self, node: Any, target: Any) -> Check | None:
        try:
            return self.ref(str(target))
        except LookupError:
            return None

    def _combined(self, node: Any, branches: Any, exactly_one: bool) -> Check | None:
        # A failure is reported by jsonschema itself: it picks the best sub-error.
        report = self.delegate({("oneOf" if exactly_one else "anyOf"): branches})
        tests = [self._type_only(b) for b in branches]
        if all(tests):
            # int-or-string and quantities: branches that only name types are
            # decided by the type tests alone, without building errors.
            type_tests = [t for t in tests if t is not None]

            def by_type(value: Any, path: Path, out: list[ValidationError]) -> None:
                matched = sum(1 for test in type_tests if test(value))
                if matched != 1 if exactly_one else matched == 0:
                    report(value, path, out)

            return by_type
        compiled = [self.compile(b) for b in branches]

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            matched = 0
            for branch in compiled:
                errors: list[ValidationError] = []
                branch(value, None, errors)
                if not errors:
                    matched += 1
                    if not exactly_one or matched > 1:
                        break
            if matched != 1 if exactly_one else matched == 0:
                report(value, path, out)

        return check

    def _asserts_only(self, node: Any, keyword: str) -> bool:
        return isinstance(node, Mapping) and all(
            k == keyword or k not in self.supported or k in _IGNORED for k in node
        )

    def _type_only(self, node: Any) -> Callable[[Any], bool] | None:
        """The type test of a node that asserts nothing but its ``type``, else None."""
        if not self._asserts_only(node, "type") or "type" not in node:
            return None
        types = node["type"]
        return _type_test(types if isinstance(types, list) else [types])

    def fast_types(self, node: Any, depth: int = 0) -> frozenset[type] | None:
        """The exact Python types that pass ``node`` outright, when its verdict depends on
        the type alone (``type``; a ``oneOf``/``anyOf`` of types such as int-or-string;
        a ``$ref`` to one of those); None otherwise. ``bool`` is not ``int`` here, as in
        JSON Schema; a whole float for ``integer`` is left to the full check."""
        if depth > 8 or not isinstance(node, Mapping):
            return None
        if self._asserts_only(node, "type") and "type" in node:
            types = node["type"] if isinstance(node["type"], list) else [node["type"]]
            if not all(t in _EXACT for t in types):
                return None
            return frozenset(cls for t in types for cls in _EXACT[t])
        if self._asserts_only(node, "$ref") and "$ref" in node:
            try:
                return self.fast_types(self.resolve(str(node["$ref"])), depth + 1)
            except LookupError:
                return None
        for keyword in ("oneOf", "anyOf"):
            if self._asserts_only(node, keyword) and keyword in node:
                branches = [self.fast_types(b, depth + 1) for b in node[keyword]]
                if any(
                    b is None or self._type_only(b_node) is None
                    for b, b_node in zip(branches, node[keyword], strict=True)
                ):
                    return None
                counts: dict[type, int] = {}
                for branch in branches:
                    for cls in branch or ():
                        counts[cls] = counts.get(cls, 0) + 1
                if keyword == "oneOf":
                    # A whole float is an "integer" too: leave floats to the full check.
                    return frozenset(c for c, n in counts.items() if n == 1 and c is not float)
                return frozenset(counts)
        return None

    _handlers: dict[str, Callable[[_Compiler, Any, Any], Check | None]] = {}


def _simple(
    keyword: str, applies: Callable[[Any], bool], fails: Callable[[Any, Any], bool], says: str
) -> Callable[[_Compiler, Any, Any], Check | None]:
    """A keyword that compares the instance with its value, e.g. ``maxLength``."""

    def handler(compiler: _Compiler, node: Any, limit: Any) -> Check | None:

        def check(value: Any, path: Path, out: list[ValidationError]) -> None:
            if applies(value) and fails(value, limit):
                message = says.format(value=value, limit=limit, empty=_emptiness(keyword, limit))
                out.append(_error(message, keyword, limit, value, node, path, compiler))

        return check

    return handler


def _emptiness(keyword: str, limit: Any) -> str:
    """jsonschema's words for a length bound: special ones for 0 and 1."""
    if keyword in ("minItems", "minLength"):
        return "should be non-empty" if limit == 1 else "is too short"
    if keyword in ("maxItems", "maxLength"):
        return "is expected to be empty" if limit == 0 else "is too long"
    if keyword == "minProperties":
        return "should be non-empty" if limit == 1 else "does not have enough properties"
    if keyword == "maxProperties":
        return "is expected to be empty" if limit == 0 else "has too many properties"
    return ""


def _pattern(compiler: _Compiler, node: Any, pattern: Any) -> Check | None:
    regex = re.compile(pattern)

    def check(value: Any, path: Path, out: list[ValidationError]) -> None:
        if isinstance(value, str) and not regex.search(value):
            message = f"{value!r} does not match {pattern!r}"
            out.append(_error(message, "pattern", pattern, value, node, path, compiler))

    return check


_is_str: Callable[[Any], bool] = lambda v: isinstance(v, str)  # noqa: E731
_is_list: Callable[[Any], bool] = lambda v: isinstance(v, list)  # noqa: E731
_is_dict: Callable[[Any], bool] = lambda v: isinstance(v, dict)  # noqa: E731

_Compiler._handlers = {
    "type": _Compiler._type,
    "enum": _Compiler._enum,
    "properties": _Compiler._properties,
    "additionalProperties": _Compiler._additional,
    "required": _Compiler._required,
    "items": _Compiler._items,
    "$ref": _Compiler._ref,
    "anyOf": lambda c, node, value: c._combined(node, value, exactly_one=False),
    "oneOf": lambda c, node, value: c._combined(node, value, exactly_one=True),
    "pattern": _pattern,
    "minimum": _simple(
        "minimum", _is_number, lambda v, m: v < m, "{value!r} is less than the minimum of {limit!r}"
    ),
    "maximum": _simple(
        "maximum",
        _is_number,
        lambda v, m: v > m,
        "{value!r} is greater than the maximum of {limit!r}",
    ),
    "minLength": _simple("minLength", _is_str, lambda v, m: len(v) < m, "{value!r} {empty}"),
    "maxLength": _simple("maxLength", _is_str, lambda v, m: len(v) > m, "{value!r} {empty}"),
    "minItems": _simple("minItems", _is_list, lambda v, m: len(v) < m, "{value!r} {empty}"),
    "maxItems": _simple("maxItems", _is_list, lambda v, m: len(v) > m, "{value!r} {empty}"),
    "minProperties": _simple(
        "minProperties", _is_dict, lambda v, m: len(v) < m, "{value!r} {empty}"
    ),
    "maxProperties": _simple(
        "maxProperties", _is_dict, lambda v, m: len(v) > m, "{value!r} {empty}"
    ),
}


class CompiledSchema:
    """A schema compiled as it is used; :meth:`errors` gives the errors jsonschema's
    ``iter_errors`` gives (the same order once sorted by path; errors at one path in
    jsonschema's order).

    Args:
        schema: the root schema. It is read as instances reach its nodes, so it must
            not change once given.
        fallback: a jsonschema validator for ``schema`` (its class sets the draft), or
            a function that makes one, called the first time one is needed; it reports
            whatever the compiled checks leave to it.
        resolve: the schema a ``$ref`` names; raise LookupError for an unknown one.
            Default: no ``$ref`` resolves.
        keywords: the keywords of the schema's draft (:data:`DRAFT7_KEYWORDS`,
            :data:`DRAFT202012_KEYWORDS`); required with a factory, and by default the
            ``VALIDATORS`` of the validator's class.
    """

    def __init__(
        self,
        schema: Any,
        fallback: Validator | Callable[[], Validator],
        resolve: Callable[[str], Any] | None = None,
        keywords: Collection[str] | None = None,
    ) -> None:
        def no_refs(target: str) -> Any:
            raise LookupError(target)

        make: Callable[[], Validator]
        if hasattr(fallback, "iter_errors"):  # a validator, not a factory
            validator = cast("Validator", fallback)
            make = lambda: validator  # noqa: E731
            if keywords is None:
                keywords = type(validator).VALIDATORS
        else:
            make = fallback
        if keywords is None:
            raise TypeError("a fallback factory needs the keywords of its draft")
        self._check = _Compiler(resolve or no_refs, make, keywords).compile(schema)

    def errors(self, instance: Any) -> list[ValidationError]:
        """Every error; empty when the instance is valid."""
        out: list[ValidationError] = []
        self._check(instance, None, out)
        return out


def compile_schema(
    schema: Any,
    fallback: Validator | Callable[[], Validator],
    resolve: Callable[[str], Any] | None = None,
    keywords: Collection[str] | None = None,
) -> CompiledSchema:
    """Compile ``schema`` (see :class:`CompiledSchema`)."""
    return CompiledSchema(schema, fallback, resolve, keywords)
