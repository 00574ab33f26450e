"""Compiled schemas report exactly what jsonschema reports, on valid and broken objects."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.corpus import examples, leaf_paths, stack_of
from trainjobs.check import crd_schema, k8s_schema
from trainjobs.check.compiled import compile_schema, json_equal
from trainjobs.errors import SpecError, format_path
from trainjobs.render import render

VERSION = "1.32"


@cache
def rendered() -> tuple[dict[str, Any], ...]:
    """Every object every example renders to, on every target."""
    found = []
    for example in examples():
        for target in example.targets:
            try:
                found += render(stack_of(example.docs), target).manifests
            except SpecError:
                continue
    return tuple(found)


def _reference(manifest: dict[str, Any]) -> list[Any] | None:
    """What plain jsonschema says, formatted the way the checks format it."""
    api_version, kind = str(manifest.get("apiVersion")), str(manifest.get("kind"))
    schema = crd_schema.schema_for(api_version, kind)
    if schema is not None:
        draft7 = jsonschema.Draft7Validator(schema)
        errors = sorted(draft7.iter_errors(manifest), key=lambda e: [str(p) for p in e.path])
        return [
            (_dotted(e.absolute_path), k8s_schema.plain_message(e.message, e.instance), e.instance)
            for e in errors
        ]
    if not k8s_schema.has_schema(manifest, VERSION):
        return None
    validator = k8s_schema._validator(VERSION, k8s_schema._filename(api_version, kind))
    return list(k8s_schema._problems(list(validator.iter_errors(manifest))))


def _dotted(path: Any) -> str:
    return format_path(path)


def _compiled(manifest: dict[str, Any]) -> list[Any] | None:
    found = crd_schema.problems(manifest)
    if found is not None:
        return found
    if not k8s_schema.has_schema(manifest, VERSION):
        return None
    return k8s_schema.problems(manifest, VERSION)


def test_every_rendered_object_is_valid_both_ways() -> None:
    objects = rendered()
    kinds = {o["kind"] for o in objects}
    assert {"Pod", "Service"} <= kinds and len(kinds) > 3  # custom resources too
    for manifest in objects:
        assert _compiled(manifest) in ([], None), manifest["metadata"]
    # jsonschema takes milliseconds per object: one of each kind is enough for it.
    one_each = {(o["apiVersion"], o["kind"]): o for o in objects}
    for manifest in one_each.values():
        assert _compiled(manifest) == _reference(manifest), manifest["metadata"]


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=70000),
    st.sampled_from([1.0, 2.5, -0.5]),
    st.text(max_size=6),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "name", "x"]), st.integers(), max_size=2),
)


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_broken_objects_get_the_same_errors(data: st.DataObject) -> None:
    manifest = copy.deepcopy(data.draw(st.sampled_from(rendered())))
    paths = [p for p in leaf_paths(manifest) if p and p[0] not in ("apiVersion", "kind")]
    containers = sorted({p[:i] for p in paths for i in range(1, len(p))}, key=str)
    path = data.draw(st.sampled_from(paths + containers))
    parent = manifest
    for part in path[:-1]:
        parent = parent[part]
    action = data.draw(st.sampled_from(["set", "delete", "add"]))
    if action == "set":
        parent[path[-1]] = data.draw(_JUNK)
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.sampled_from(["imagePullPolcy", "zz", "replica"]))] = 1
    assert _compiled(manifest) == _reference(manifest)


# ----- the compiler's own cases, against jsonschema directly -----


def _by_path(errors: Any) -> list[Any]:
    """Errors as the checks use them: sorted (stably) by path."""
    found = [(list(e.absolute_path), e.message, e.validator) for e in errors]
    return sorted(found, key=lambda e: [str(p) for p in e[0]])


def _same(
    schema: dict[str, Any], instance: Any, draft: type = jsonschema.Draft202012Validator
) -> None:
    fallback = draft(schema)
    compiled = compile_schema(schema, fallback)
    assert _by_path(compiled.errors(instance)) == _by_path(fallback.iter_errors(instance))


QUANTITY = {"oneOf": [{"type": ["string", "null"]}, {"type": ["number", "null"]}]}
INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}]}


@pytest.mark.parametrize("instance", ["4", 4, 1.5, None, True, [], {"a": 1}], ids=lambda v: repr(v))
@pytest.mark.parametrize("schema", [QUANTITY, INT_OR_STRING], ids=["oneOf", "anyOf"])
def test_type_unions_are_decided_like_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    _same({"type": "object", "properties": {"q": schema}}, {"q": instance})


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ({"type": "integer"}, 2.0),
        ({"type": "integer"}, True),
        ({"type": ["integer", "null"]}, "x"),
        ({"enum": ["a", "b"]}, "c"),
        ({"enum": [1, 2]}, True),
        ({"minimum": 1, "maximum": 3}, 0),
        ({"minimum": 1, "maximum": 3}, 4),
        ({"minLength": 1, "maxLength": 2}, ""),
        ({"maxLength": 0}, "x"),
        ({"minItems": 2, "maxItems": 3}, [1]),
        ({"maxItems": 1}, [1, 2]),
        ({"minProperties": 1}, {}),
        ({"minProperties": 2}, {"a": 1}),
        ({"pattern": "^[a-z]+$"}, "A1"),
        ({"required": ["a", "b"], "properties": {"a": {"type": "string"}}}, {"a": 1}),
        ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "c": 2, "b": 3}),
        ({"additionalProperties": {"type": "string"}}, {"a": "x", "b": 2}),
        ({"items": {"type": "string"}}, ["a", 2, None]),
        ({"allOf": [{"type": "string"}, {"minLength": 3}]}, "ab"),  # left to jsonschema
        ({"not": {"type": "string"}}, "ab"),  # left to jsonschema
        ({"oneOf": [{"type": "string"}, {"minLength": 1}]}, "ab"),  # not type-only
        ({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {}),
    ],
)
def test_keywords_match_jsonschema(schema: dict[str, Any], instance: Any) -> None:
    _same(schema, instance)
    _same(schema, instance, jsonschema.Draft7Validator)


def test_recursive_refs_compile_once() -> None:
    schema: dict[str, Any] = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"child": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}},
                "additionalProperties": False,
            }
        },
        "$ref": "#/$defs/node",
    }
    fallback = jsonschema.Draft202012Validator(schema)

    def resolve(ref: str) -> Any:
        return schema["$defs"][ref.rpartition("/")[2]]

    compiled = compile_schema(schema, fallback, resolve)
    deep: dict[str, Any] = {"v": "x", "child": {"child": {"v": 1, "w": 2}}}
    got = _by_path(compiled.errors(deep))
    assert got == _by_path(fallback.iter_errors(deep))
    assert got == [
        (
            ["child", "child"],
            "Additional properties are not allowed ('w' was unexpected)",
            "additionalProperties",
        ),
        (["v"], "'x' is not of type 'integer'", "type"),
    ]


def test_draft7_ref_hides_its_siblings() -> None:
    schema: dict[str, Any] = {
        "definitions": {"s": {"type": "string"}},
        "$ref": "#/definitions/s",
        "type": "integer",
    }
    fallback = jsonschema.Draft7Validator(schema)
    compiled = compile_schema(schema, fallback, lambda ref: schema["definitions"]["s"])
    assert [e.message for e in compiled.errors(3)] == ["3 is not of type 'string'"]
    assert [e.message for e in fallback.iter_errors(3)] == ["3 is not of type 'string'"]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (True, 1),
        (False, 0),
        (1, 1.0),
        ("1", 1),
        ([1, True], [1.0, True]),
        ([1, True], [1, 1]),
        ({"a": [1]}, {"a": [1.0]}),
        ({"a": 1}, {"a": 1, "b": 2}),
        (None, None),
        ([], {}),
    ],
)
def test_json_equality_is_jsonschemas(one: Any, other: Any) -> None:
    """``enum`` compares as jsonschema's own validator does (through its public API)."""
    expected = jsonschema.Draft202012Validator({"enum": [one]}).is_valid(other)
    assert json_equal(one, other) is expected
