"""The schema cache saves time and nothing else: what it returns is what the source
gives, whether the cache is empty, warm, corrupt, someone else's or unwritable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from trainjobs.check import k8s_schema, schema_cache
from trainjobs.check.compiled import DRAFT7_KEYWORDS, DRAFT202012_KEYWORDS, without_descriptions
from trainjobs.check.crd_schema import _version_schemas
from trainjobs.check.k8s_versions import schema_root
from trainjobs.k8s.crds import crd_dir, parse_crd

VERSION = "1.32"
TFJOB_CRD = crd_dir() / "training-operator-v1.9.4" / "kubeflow.org_tfjobs.yaml"


class Builds:
    """A build function that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, source: bytes) -> Any:
        self.calls += 1
        return {"length": len(source), "text": source.decode()}


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("TRAINJOBS_NO_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "trainjobs" / "schemas"


def test_a_part_is_built_once_then_read(cache_home: Path) -> None:
    build = Builds()
    first = schema_cache.cached("part", b"source", build)
    second = schema_cache.cached("part", b"source", build)
    assert first == second == {"length": 6, "text": "source"}
    assert build.calls == 1
    assert len(list(cache_home.glob("*.json"))) == 1
    assert not list(cache_home.glob(".tmp-*"))  # written whole, then renamed


def test_another_source_or_part_is_another_entry(cache_home: Path) -> None:
    build = Builds()
    schema_cache.cached("part", b"source", build)
    assert schema_cache.cached("part", b"other", build)["text"] == "other"
    assert schema_cache.cached("other part", b"source", build)["text"] == "source"
    assert build.calls == 3


@pytest.mark.parametrize(
    "damage",
    [b"", b"{not json", b'{"key": "x", "value": 1}', b"[1, 2]", b"\xff\xfe"],
    ids=["empty", "truncated", "another key", "not an entry", "not text"],
)
def test_a_corrupt_entry_is_built_again_and_replaced(cache_home: Path, damage: bytes) -> None:
    build = Builds()
    expected = schema_cache.cached("part", b"source", build)
    (entry,) = cache_home.glob("*.json")
    entry.write_bytes(damage)
    assert schema_cache.cached("part", b"source", build) == expected
    assert build.calls == 2
    assert json.loads(entry.read_text())["value"] == expected


def test_an_unwritable_cache_still_gives_the_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("the cache folder cannot be made under a file")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    build = Builds()
    assert schema_cache.cached("part", b"source", build)["text"] == "source"
    assert schema_cache.cached("part", b"source", build)["text"] == "source"
    assert build.calls == 2


def test_a_value_json_cannot_hold_is_returned_and_not_kept(cache_home: Path) -> None:
    assert schema_cache.cached("part", b"source", lambda _: {1, 2}) == {1, 2}
    assert not cache_home.exists() or not list(cache_home.glob("*.json"))


def test_where_the_cache_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRAINJOBS_NO_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert schema_cache.cache_dir() == tmp_path / "xdg" / "trainjobs" / "schemas"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as XDG says
    assert schema_cache.cache_dir() == tmp_path / "home" / ".cache" / "trainjobs" / "schemas"
    monkeypatch.setenv("TRAINJOBS_NO_CACHE", "1")
    assert schema_cache.cache_dir() is None
    build = Builds()
    schema_cache.cached("part", b"source", build)
    schema_cache.cached("part", b"source", build)
    assert build.calls == 2
    assert not (tmp_path / "home").exists()


def test_a_crd_read_from_the_cache_equals_the_crd_parsed(cache_home: Path) -> None:
    source = TFJOB_CRD.read_bytes()
    parsed = _version_schemas(source)
    assert schema_cache.cached("crd-versions", source, _version_schemas) == parsed
    assert schema_cache.cached("crd-versions", source, _version_schemas) == parsed
    assert list(parsed) == ["v1"]


def test_the_keyword_tables_are_jsonschemas() -> None:
    assert set(jsonschema.Draft7Validator.VALIDATORS) == DRAFT7_KEYWORDS
    assert set(jsonschema.Draft202012Validator.VALIDATORS) == DRAFT202012_KEYWORDS


KINDS = ["podtemplatespec-v1.json", "pod-v1.json", "service-v1.json", "deployment-apps-v1.json"]


@pytest.mark.parametrize("filename", KINDS)
def test_a_kind_keeps_every_definition_it_reaches(filename: str) -> None:
    part = k8s_schema._kind(VERSION, filename)
    kept = part["definitions"]["$defs"]
    everything = json.loads(
        (schema_root() / f"v{VERSION}.0-local-strict" / "_definitions.json").read_text()
    )
    assert {k: v for k, v in part["definitions"].items() if k != "$defs"} == {
        k: v for k, v in everything.items() if k != "$defs"
    }
    refs: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(part["schema"])
    walk(kept)
    assert refs
    assert {ref.partition("#/$defs/")[2] for ref in refs} == set(kept)
    assert all(kept[name] == without_descriptions(everything["$defs"][name]) for name in kept)
    assert len(kept) < len(everything["$defs"])


def test_a_kind_with_what_it_reaches_says_what_the_whole_file_says() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": 1}},
        "spec": {
            "containers": [{"name": "c", "image": 3, "ports": [{"containerPort": "x"}]}],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": []}}],
            "restartPolicy": "Sometimes",
            "nope": True,
        },
    }
    folder = schema_root() / f"v{VERSION}.0-local-strict"
    schema = json.loads((folder / "pod-v1.json").read_text())
    whole = Resource.from_contents(json.loads((folder / "_definitions.json").read_text()))
    reference = jsonschema.validators.validator_for(schema)(schema, registry=whole @ Registry())
    ours = k8s_schema._validator(VERSION, "pod-v1.json")

    def said(validator: Any) -> list[tuple[str, str]]:
        return sorted((e.json_path, e.message) for e in validator.iter_errors(pod))

    assert said(ours) == said(reference)
    assert len(said(reference)) >= 5


def test_a_kind_no_file_can_have_is_unknown() -> None:
    for kind in ("../pod", "a/b", "x\0y", ".hidden"):
        manifest = {"apiVersion": "v1", "kind": kind}
        assert not k8s_schema.has_schema(manifest, VERSION)
        with pytest.raises(k8s_schema.UnknownKind):
            k8s_schema.problems(manifest, VERSION)


def test_only_the_descriptions_of_schemas_go() -> None:
    schema = {
        "type": "object",
        "description": "gone",
        "properties": {
            "description": {"type": "string", "description": "gone"},
            "a": {
                "default": {"description": "kept"},
                "enum": [{"description": "kept"}],
                "items": {"description": "gone", "type": "integer"},
            },
        },
        "allOf": [{"description": "gone", "required": ["a"]}],
        "additionalProperties": {"description": "gone"},
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert without_descriptions(schema) == {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "a": {
                "default": {"description": "kept"},
                "enum": [{"description": "kept"}],
                "items": {"type": "integer"},
            },
        },
        "allOf": [{"required": ["a"]}],
        "additionalProperties": {},
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert schema["description"] == "gone"  # the input is not changed


def test_a_crd_without_descriptions_says_what_the_crd_says() -> None:
    whole = parse_crd(TFJOB_CRD.read_bytes())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    tfjob = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "t"},
        "spec": {
            "runPolicy": {"backoffLimit": "x", "cleanPodPolicy": "Sometimes"},
            "tfReplicaSpecs": {"Worker": {"replicas": "two", "template": {"spec": []}}},
        },
    }

    def said(schema: Any) -> list[tuple[str, str]]:
        errors = jsonschema.Draft7Validator(schema).iter_errors(tfjob)
        return sorted((e.json_path, e.message) for e in errors)

    assert said(_version_schemas(TFJOB_CRD.read_bytes())["v1"]) == said(whole)
    assert len(said(whole)) >= 3
    assert len(json.dumps(without_descriptions(whole))) < len(json.dumps(whole)) / 2
