"""Reliability: never crash on bad input, never leak a secret, never lose what exists.

Every test here is generic over the stacks and examples in the repository, so a
new framework, backend or operator is covered as soon as it has an example.
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.support.paths import ROOT, example_job_files, stack_files
from tests.support.pulumi_harness import run_program
from trainjobs.check import run
from trainjobs.cli import main
from trainjobs.components import program
from trainjobs.errors import SpecError
from trainjobs.k8s.names import dns1123_subdomain_problem, label_value_problem
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_all, load_all
from trainjobs.platform import API_VERSION
from trainjobs.spec import Target, load_path, parse_documents

# Key material itself, not the words: shipped CRDs document PEM "PRIVATE KEY" blocks.
SECRET_MARKERS = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|\b(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+) AAAA"
)


def _example_files() -> list[list[dict[str, Any]]]:
    """The documents of each example file: a job and the platform resources it names."""
    files = []
    for path in example_job_files():
        files.append([d for d in load_all(path.read_text()) if isinstance(d, dict)])
    return files


EXAMPLE_FILES = _example_files()
EXAMPLE_DOCS = [doc for docs in EXAMPLE_FILES for doc in docs]

# ----- valid input: every render passes every check and is deterministic -----


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.sampled_from(EXAMPLE_FILES),
    name=st.from_regex(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?", fullmatch=True),
    target=st.sampled_from(["operator", "pods"]),
)
def test_renamed_examples_render_checked_with_names_in_limits(
    docs: list[dict[str, Any]], name: str, target: str
) -> None:
    docs = copy.deepcopy(docs)
    for doc in docs:
        if doc.get("apiVersion") != API_VERSION:  # jobs; the platform they name keeps its name
            doc["metadata"]["name"] = name
    stack = parse_documents(docs)
    assume(all(target in e.framework.targets for e in stack.jobs))
    first = run(stack, target=target)  # type: ignore[arg-type]
    assert dump_all(first.manifests) == dump_all(run(stack, target=target).manifests)  # type: ignore[arg-type]
    for manifest in first.manifests:
        meta = manifest["metadata"]
        assert len(meta["name"]) <= 63
        assert dns1123_subdomain_problem(meta["name"]) is None
        for value in (meta.get("labels") or {}).values():
            assert label_value_problem(value) is None


def test_long_names_are_shortened_without_collisions() -> None:
    # A TFJob from a file of its own: it names no node pool, so it renders alone.
    base = next(d for docs in EXAMPLE_FILES if len(docs) == 1 for d in docs if d["kind"] == "TFJob")
    names = set()
    for suffix in ("a", "b"):
        doc = copy.deepcopy(base)
        doc["metadata"]["name"] = "x" * 60 + suffix
        manifests = run(parse_documents([doc]), target="pods").manifests
        names |= {m["metadata"]["name"] for m in manifests if m["kind"] == "Pod"}
    assert all(len(n) <= 63 for n in names)
    pods_per_job = sum(
        1 for m in run(parse_documents([base]), target="pods").manifests if m["kind"] == "Pod"
    )
    assert len(names) == 2 * pods_per_job


# ----- invalid input: always a SpecError with a path, never anything else -----


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False),
    st.text(max_size=80),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=10), st.integers(), max_size=3),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    doc=st.sampled_from(EXAMPLE_DOCS),
    action=st.sampled_from(["set", "delete", "add"]),
)
def test_mutated_input_gives_spec_error_or_a_valid_render(
    data: st.DataObject, doc: dict[str, Any], action: str
) -> None:
    doc = copy.deepcopy(doc)
    path = data.draw(st.sampled_from(_paths(doc)[1:]))
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    key = path[-1]
    if action == "set":
        parent[key] = data.draw(_junk)
    elif action == "delete":
        del parent[key]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=12))] = data.draw(_junk)
    try:
        run(parse_documents([doc]), target=data.draw(st.sampled_from(["operator", "pods"])))
    except SpecError as exc:
        assert exc.errors, "a SpecError always carries at least one error"
        assert all(f.path or f.source for f in exc.errors)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "holds no YAML documents"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "is a binary file"),
        (b"jobs: [\n", "invalid YAML"),
        (b"42\n", "a job must be a mapping"),
        (b"x" * (50 * 1024 * 1024), "trainjobs reads at most"),
    ],
    ids=["empty", "binary", "syntax", "scalar", "50MB"],
)
def test_cli_bad_files_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, fragment: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(content)
    out = tmp_path / "out"
    assert main(["render", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert fragment in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml"]


def test_duplicate_jobs_are_reported_once_each(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_text()
    dup = tmp_path / "dup.yaml"
    dup.write_text(text + "\n---\n" + text)
    with pytest.raises(SpecError) as err:
        run(load_path(dup))
    assert {f.code for f in err.value.errors} == {"name.duplicate"}
    assert err.value.errors[0].path.startswith("jobs[1] → TFJob kubeflow/mnist")


# ----- secrets never in plain text -----


def _all_renders() -> list[str]:
    texts = []
    for path in [*stack_files(), *example_job_files()]:
        targets: tuple[Target | None, ...] = (None, "operator", "pods")
        for target in targets:
            try:
                rendering = run(load_path(path), target=target)
            except SpecError:
                continue  # a job without this target
            texts.append(dump_all(redact(m) for m in rendering.manifests))
    return texts


def test_no_secret_material_in_renders_or_snapshots() -> None:
    for text in _all_renders():
        assert not SECRET_MARKERS.search(text)
    for snapshot in (ROOT / "tests").rglob("__snapshots__/**/*"):
        if snapshot.is_file():
            assert not SECRET_MARKERS.search(snapshot.read_text(errors="replace")), snapshot


# ----- operators and CRDs -----


def _rendered_objects() -> list[dict[str, Any]]:
    objects = []
    for path in stack_files():
        objects += run(load_path(path)).manifests
    return objects


def test_no_wildcard_rbac_and_no_cluster_admin() -> None:
    for manifest in _rendered_objects():
        if manifest["kind"] in ("Role", "ClusterRole"):
            for rule in manifest.get("rules") or []:
                for field in ("verbs", "resources", "apiGroups"):
                    assert "*" not in (rule.get(field) or []), (manifest["metadata"], rule)
        if manifest["kind"] in ("RoleBinding", "ClusterRoleBinding"):
            assert manifest["roleRef"]["name"] != "cluster-admin", manifest["metadata"]


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: p.name)
def test_every_crd_is_retained_on_delete(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(path.parent))
    config = load_all(path.read_text())[0]["config"]
    for resource in run_program(program, config, stack=path.stem.split(".", 1)[1]):
        if resource.type.endswith(":CustomResourceDefinition"):
            assert resource.options["retain_on_delete"] is True, resource.name


# ----- output safety -----


def test_render_touches_nothing_outside_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    stack = stack_files()[0]
    before = {p for p in tmp_path.rglob("*")}
    assert main(["render", str(stack), "-o", "out"]) == 0
    after = {p for p in tmp_path.rglob("*")}
    assert {p.relative_to(tmp_path).parts[0] for p in after - before} == {"out"}
    assert os.listdir(tmp_path) == ["out"]
