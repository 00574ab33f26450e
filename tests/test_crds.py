"""Generated CRDs: structural, up to date in crds/, and accepting every upstream example.

Generic over the framework registry: a framework with ``crd_generated = True`` is
covered as soon as it is registered (and its upstream examples sit in tests/data/).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.paths import DATA, ROOT
from trainjobs.check.compiled import without_descriptions
from trainjobs.check.crd_schema import schema_for
from trainjobs.cli import main
from trainjobs.frameworks.crds import GENERATED_DIR, crd_files, generated
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.yamlio import load_all

CRDS = ROOT / "crds"
FILES = crd_files()
GENERATED_KINDS = {
    (fw.kind.api_version, fw.kind.kind): fw for group in generated().values() for fw in group
}


def test_every_generating_framework_has_a_file() -> None:
    expected = sorted(fw.crd_file for fw in REGISTRY if fw.crd_generated)
    assert sorted(FILES) == sorted(set(expected))
    assert all(path.startswith(f"{GENERATED_DIR}/") for path in FILES)


@pytest.mark.parametrize("relative", sorted(FILES))
def test_generated_crd_has_one_storage_version(relative: str) -> None:
    # Whether its schema is structural is the real API server's call: tests/cluster
    # installs every shipped CRD and waits until each is Established.
    (crd,) = load_all(FILES[relative])
    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert sum(v["storage"] for v in crd["spec"]["versions"]) == 1


def test_crds_folder_is_not_stale() -> None:
    stale = [
        path
        for path, text in FILES.items()
        if not (CRDS / path).is_file() or (CRDS / path).read_text() != text
    ]
    extra = sorted(
        str(p.relative_to(CRDS))
        for p in (CRDS / GENERATED_DIR).glob("*.yaml")
        if str(p.relative_to(CRDS)) not in FILES
    )
    assert (stale, extra) == ([], []), "crds/ is stale: run `.venv/bin/trainjobs crds -o crds/`"


def test_the_checks_use_the_generated_crds() -> None:
    for (api_version, kind), framework in GENERATED_KINDS.items():
        (crd,) = load_all(FILES[framework.crd_file])
        (version,) = [v for v in crd["spec"]["versions"] if v["name"] == framework.kind.version]
        # The checks keep no descriptions (check.schema_cache): annotations, no rules.
        expected = without_descriptions(version["schema"]["openAPIV3Schema"])
        assert schema_for(api_version, kind) == expected


def _upstream_examples() -> list[tuple[Path, int, dict[str, Any]]]:
    """Every document in tests/data whose kind has a generated CRD (templates filled in)."""
    found = []
    for path in sorted(DATA.rglob("*")):
        if path.suffix not in (".yaml", ".yml", ".tmpl") or not path.is_file():
            continue
        text = path.read_text().replace("<jobname>", "example")
        # PyYAML's own loader: an upstream file holds a key twice, which trainjobs'
        # loader refuses; the CRD schema is what this test is about.
        for index, doc in enumerate(d for d in yaml.safe_load_all(text) if d is not None):
            if (
                isinstance(doc, dict)
                and (doc.get("apiVersion"), doc.get("kind")) in GENERATED_KINDS
            ):
                found.append((path, index, doc))
    return found


# Upstream examples that never worked, refused by their CRD as by the API server:
# file (relative to tests/data) → the one error expected.
REFUSED = {
    "ms-operator/legacy-kubeflow-v1/ms-dist-train.yaml": (
        "['spec', 'replicaSpecs', 1, 'template', 'spec', 'containers', 0, 'volumeMounts', 1]: "
        "'mountPath' is a required property"
    ),
}
EXAMPLES = _upstream_examples()


def _errors(doc: dict[str, Any]) -> list[str]:
    schema = schema_for(doc["apiVersion"], doc["kind"])
    assert schema is not None
    return [
        f"{list(e.absolute_path)}: {e.message}"
        for e in jsonschema.Draft7Validator(schema).iter_errors(doc)
    ]


def test_every_generated_kind_has_upstream_examples() -> None:
    covered = {(doc["apiVersion"], doc["kind"]) for _, _, doc in EXAMPLES}
    assert covered == set(GENERATED_KINDS)


@pytest.mark.parametrize(
    ("path", "index", "doc"),
    EXAMPLES,
    ids=[f"{p.parent.name}/{p.name}[{i}]" for p, i, _ in EXAMPLES],
)
def test_upstream_example_validates_against_its_crd(
    path: Path, index: int, doc: dict[str, Any]
) -> None:
    refused = REFUSED.get(str(path.relative_to(DATA)))
    assert _errors(doc) == ([refused] if refused else [])


def test_a_broken_example_is_caught() -> None:
    """The validation above can fail: a wrong type in an example is an error."""
    valid = [(p, d) for p, _, d in EXAMPLES if str(p.relative_to(DATA)) not in REFUSED]
    firsts = {(d["apiVersion"], d["kind"]): (p, d) for p, d in reversed(valid)}
    assert len(firsts) == len(GENERATED_KINDS) - 1  # the 2020 MSJob has only the refused one
    for path, doc in firsts.values():
        assert _errors({**doc, "spec": {**doc["spec"], "unexpectedly": {"a": 1}}}) == [], path
        assert _errors({**doc, "spec": "lots"}), path


def test_cli_writes_the_crds_and_removes_stale_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / GENERATED_DIR / "oldjobs.example.org.yaml"
    stale.parent.mkdir()
    stale.write_text("# Generated by `trainjobs crds` from the trainjobs model of Old.\nold")
    # A file of the user's in the generated folder carries no mark: never removed.
    mine = tmp_path / GENERATED_DIR / "myjobs.example.org.yaml"
    mine.write_text("mine")
    keep = tmp_path / "vendored" / "upstream.yaml"
    keep.parent.mkdir()
    keep.write_text("kept")
    assert main(["crds", "-o", str(tmp_path)]) == 0
    assert not stale.exists()
    assert keep.read_text() == "kept" and mine.read_text() == "mine"
    for relative, text in FILES.items():
        assert (tmp_path / relative).read_text() == text
    assert capsys.readouterr().out.splitlines() == [f"wrote {tmp_path / r}" for r in FILES]


def test_cli_prints_the_crds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crds"]) == 0
    docs = load_all(capsys.readouterr().out)
    assert [d["metadata"]["name"] for d in docs] == [
        load_all(t)[0]["metadata"]["name"] for t in FILES.values()
    ]
