"""Reliability: valid input always renders and passes every check, byte for byte the
same each time; bad input is always a SpecError naming the user's field path (CLI
exit 2, no traceback), never another exception, and nothing is written.

Every test is generic over the examples (``tests.support.corpus``,
``tests.support.strategies``): a framework or platform kind merged later is
covered as soon as it has an example. Output safety of ``render -o`` is in
``test_output_safety.py``, secrets in ``test_secrets.py``, operator installs in
``test_operator_policy.py``.
"""

from __future__ import annotations

import copy
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.corpus import examples, is_job, knobs, leaf_paths, set_path, stack_of
from tests.support.paths import ROOT
from tests.support.strategies import (
    ValidInput,
    max_name_length,
    normalised,
    user_path,
    valid_inputs,
    with_names,
)
from trainjobs.check import run
from trainjobs.check.names import LABEL_NAMED
from trainjobs.cli import main
from trainjobs.errors import Finding, SpecError, format_path
from trainjobs.k8s.names import (
    dns1123_label_problem,
    dns1123_subdomain_problem,
    label_key_problem,
    label_value_problem,
)
from trainjobs.k8s.yamlio import dump_all, load_all
from trainjobs.limits import FILE_BYTES
from trainjobs.render.jobs import MAX_PODS_PER_JOB
from trainjobs.spec import load_path, parse_documents

LABEL_LIMIT = 63
"""The longest Kubernetes label value, and so the longest name trainjobs renders."""


def _settings(examples: int) -> settings:
    """Deterministic in CI: derandomized, no example database."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _error_findings(docs: list[dict[str, Any]]) -> list[Finding] | None:
    """Every error the file gives on each of its targets, or None when it renders on
    all of them. Any other exception fails the test."""
    try:
        stack = stack_of(docs)
        targets = {e.framework.targets for e in stack.jobs}
        for target in ("operator", "pods"):
            if all(target in t for t in targets):
                run(stack, target=target)
    except SpecError as exc:
        assert exc.errors, "a SpecError always carries an error"
        return list(exc.errors)
    return None


def _errors(docs: list[dict[str, Any]]) -> list[str] | None:
    """The normalised paths of :func:`_error_findings`."""
    found = _error_findings(docs)
    return None if found is None else [normalised(f.path) for f in found]


def _hints(docs: list[dict[str, Any]]) -> list[str]:
    """The fixes of :func:`_error_findings`."""
    return [f.hint for f in _error_findings(docs) or []]


# ----- valid input ---------------------------------------------------------


def _assert_names_fit(manifest: dict[str, Any]) -> None:
    """Every name within the limit of its kind (63 for what becomes a DNS label: Services,
    Namespaces, pod hostnames and subdomains, label values), label and annotation keys
    well formed."""
    meta = manifest["metadata"]
    rule = LABEL_NAMED.get(manifest["kind"], dns1123_subdomain_problem)
    assert rule(meta["name"]) is None, (manifest["kind"], meta["name"])
    for key, value in (meta.get("labels") or {}).items():
        assert label_key_problem(key) is None, key
        assert label_value_problem(value) is None, (key, value)
    for key in meta.get("annotations") or {}:
        assert label_key_problem(key) is None, key
    spec = manifest.get("spec") or {}
    for pod_spec in (spec, (spec.get("template") or {}).get("spec") or {}):
        for field in ("hostname", "subdomain"):
            if field in pod_spec:
                assert dns1123_label_problem(pod_spec[field]) is None, (field, pod_spec[field])


@_settings(40)
@given(case=valid_inputs())
def test_valid_input_passes_every_check_the_same_every_time(case: ValidInput) -> None:
    rendering = run(parse_documents(copy.deepcopy(case.docs)))
    assert {job.target for job in rendering.jobs} == {case.target}
    again = run(parse_documents(copy.deepcopy(case.docs)), target=case.target)
    assert dump_all(rendering.manifests) == dump_all(again.manifests)
    for manifest in rendering.manifests:
        _assert_names_fit(manifest)


@pytest.mark.parametrize("example", examples(), ids=lambda e: e.name)
def test_long_job_names_are_shortened_without_collisions(example: Any) -> None:
    length = max_name_length(example)
    base = ("long-job-" + "n" * LABEL_LIMIT)[: length - 1]
    first, second = example.copy_docs(), example.copy_docs()
    with_names(first, base + "a")
    with_names(second, base + "b")
    both = first + [d for d in second if is_job(d)]
    for target in example.targets:
        rendering = run(stack_of(both), target=target)  # duplicates would be errors
        by_job: dict[str, set[str]] = {}
        for obj in rendering.objects:
            _assert_names_fit(obj.manifest)
            by_job.setdefault(obj.job, set()).add(obj.manifest["metadata"]["name"])
        names_a = set().union(*(v for k, v in by_job.items() if k.startswith(base + "a")))
        names_b = set().union(*(v for k, v in by_job.items() if k.startswith(base + "b")))
        assert names_a and names_b and not names_a & names_b
        again = run(stack_of(both), target=target)
        assert dump_all(again.manifests) == dump_all(rendering.manifests)


# ----- bad input, library level: the exact field path ---------------------


def _names_field(
    errors: list[str], docs: list[dict[str, Any]], index: int, path: tuple[Any, ...]
) -> bool:
    """Whether an error names the field: at the user's path (or inside it, where the
    field also takes a mapping the junk fits in shape: a nodePool's {role: pool}), or —
    for a field the job passes on unchanged into an object it renders (an HPA's
    metrics) — at that object's field with the same last two steps."""
    exact = normalised(user_path(docs, index, path))
    if exact in errors or any(e.startswith((f"{exact}.", f"{exact}[")) for e in errors):
        return True
    tail = normalised(format_path(path[-2:]))
    prefix = f"{user_path(docs, index)} → "
    return any(e.startswith(prefix) and e.endswith(tail) for e in errors)


def test_replica_counts_out_of_range_name_the_count() -> None:
    failures = []
    cases = 0
    scalable = {f for e in examples() if knobs(e) for f in e.frameworks}
    rendered = {f for e in examples() if "pods" in e.targets for f in e.frameworks}
    assert rendered <= scalable, f"no example varies a replica count of {rendered - scalable}"
    for example in examples():
        for knob in knobs(example):
            # Past int32 no Kubernetes count can go; past MAX_PODS_PER_JOB trainjobs
            # refuses a job's replica counts (kinds without replica counts cap their own).
            for bad in (-1, MAX_PODS_PER_JOB + 1, 2**31, 10**12, "2", True, 2.5, None):
                if bad in (None, MAX_PODS_PER_JOB + 1) and knob.path[-1] != "replicas":
                    continue
                docs = example.copy_docs()
                knob.apply(docs, bad)  # type: ignore[arg-type]
                cases += 1
                path = normalised(user_path(docs, knob.doc, knob.path))
                errors = _errors(docs)
                if bad is None:
                    # An unset count takes its default; what may then be wrong is a
                    # field that depends on the count (a gang's minAvailable).
                    dependent = errors is not None and all(
                        e.endswith(".minAvailable") for e in errors
                    )
                    if errors is None or dependent or path in errors:
                        continue
                if errors is None or path not in errors:
                    failures.append((example.name, path, bad, errors))
    assert cases and not failures, failures


def test_bad_job_names_and_namespaces_name_the_field() -> None:
    failures = []
    for example in examples():
        first_job = example.job_indexes[0]
        bad_names = ("Bad_Name", "-lead", "x" * 64, "", "a b", "trail-")
        bad_namespaces = ("Bad_NS", "-lead", "x" * 64, "a.b")
        for field, values in (("name", bad_names), ("namespace", bad_namespaces)):
            for bad in values:
                docs = example.copy_docs()
                docs[first_job]["metadata"] = {**docs[first_job]["metadata"], field: bad}
                path = normalised(user_path(docs, first_job, ("metadata", field)))
                errors = _errors(docs)
                if errors is None or path not in errors:
                    failures.append((example.name, path, bad, errors))
    assert not failures, failures


def _quantity_paths(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        p
        for p in leaf_paths(doc)
        if len(p) >= 3 and p[-3] == "resources" and p[-2] in ("limits", "requests")
    ]


def test_bad_quantities_name_the_quantity() -> None:
    failures = []
    cases = 0
    for example in examples():
        for index in example.job_indexes:
            for path in _quantity_paths(example.docs[index]):
                for bad in ("4 cores", "1.5.2", "Gi", "-1"):
                    docs = example.copy_docs()
                    set_path(docs[index], path, bad)
                    cases += 1
                    where = normalised(user_path(docs, index, path))
                    errors = _errors(docs)
                    if errors is None or where not in errors:
                        failures.append((example.name, where, bad, errors))
    assert cases and not failures, failures


def _dict_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if isinstance(value, dict) else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _dict_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _dict_paths(item, (*prefix, index))
    return found


Node = tuple[Any, list[dict[str, Any]], int, tuple[Any, ...]]
"""An example, a copy of its documents, the index of a job among them, a path in it."""


@st.composite
def _job_node(draw: st.DrawFn, kind: str) -> Node:
    """An example, one of its job documents and a path in it: a mapping (``kind`` dict)
    or a scalar (``kind`` leaf)."""
    example = draw(st.sampled_from(examples()))
    index = draw(st.sampled_from(example.job_indexes))
    doc = example.docs[index]
    if kind == "dict":
        paths = _dict_paths(doc)
    else:
        paths = [p for p in leaf_paths(doc) if p and p[0] not in ("apiVersion", "kind")]
    return example, example.copy_docs(), index, draw(st.sampled_from(paths))


@_settings(80)
@given(case=_job_node("dict"))
def test_unknown_fields_are_named(
    case: tuple[Any, list[dict[str, Any]], int, tuple[Any, ...]],
) -> None:
    _, docs, index, path = case
    key = "unknownFieldX"
    set_path(docs[index], (*path, key), 1) if path else docs[index].__setitem__(key, 1)
    errors = _errors(docs)
    if errors is not None:  # else a free-form map (labels, nodeSelector …) took it
        assert _names_field(errors, docs, index, (*path, key)), errors


@_settings(80)
@given(case=_job_node("leaf"), junk=st.sampled_from([[1, "a"], {"a": 1}]))
def test_wrong_types_are_named(case: Node, junk: Any) -> None:
    _, docs, index, path = case
    set_path(docs[index], path, junk)
    errors = _errors(docs)
    assert errors is not None, f"{path}: a scalar field took {junk!r}"
    assert _names_field(errors, docs, index, path), errors


@_settings(80)
@given(case=_job_node("leaf"))
def test_missing_fields_are_named(
    case: tuple[Any, list[dict[str, Any]], int, tuple[Any, ...]],
) -> None:
    _, docs, index, path = case
    for depth in range(len(path), 0, -1):  # drop the field, or a mapping above it
        parent = docs[index]
        for part in path[: depth - 1]:
            parent = parent[part]
        if isinstance(parent, dict):
            del parent[path[depth - 1]]
            removed = path[:depth]
            break
    else:
        return
    errors = _errors(docs)
    if errors is not None:  # else the field is optional
        where = {
            normalised(user_path(docs, index, removed)),
            normalised(user_path(docs, index, removed[:-1])),
        }
        # One of two alternatives (a backend or the host it stands for; an ignore or the
        # setting it allows): the error is at the other, and its fix names the field.
        fixes = " ".join(_hints(docs))
        named = re.search(rf"\b{re.escape(str(removed[-1]))}\b", fixes) is not None
        assert where & set(errors) or named, (removed, errors)


_JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=10), st.integers(), max_size=3),
)


@_settings(120)
@given(data=st.data(), action=st.sampled_from(["set", "delete", "add"]))
def test_any_mutation_is_a_spec_error_located_in_the_input_or_renders(
    data: st.DataObject, action: str
) -> None:
    example = data.draw(st.sampled_from(examples()))
    docs = example.copy_docs()
    index = data.draw(st.sampled_from(range(len(docs))))
    paths = [p for p in _dict_paths(docs[index]) + list(leaf_paths(docs[index])) if p]
    path = data.draw(st.sampled_from(paths))
    parent: Any = docs[index]
    for part in path[:-1]:
        parent = parent[part]
    if action == "set":
        parent[path[-1]] = data.draw(_JUNK)
    elif action == "delete":
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=12))] = data.draw(_JUNK)
    errors = _errors(docs)
    if errors is not None:
        lists = ("jobs[", "backends[", "nodePools[", "queues[", "operators[")
        assert all(e.startswith(lists) for e in errors), errors


# ----- bad files through the CLI: exit 2, no traceback, nothing written -----


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes) and folder (None) under ``root``."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _render_fails(tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]) -> str:
    """Render ``content`` into an existing folder; assert exit 2 and that nothing changed."""
    workspace = Path(tempfile.mkdtemp(dir=tmp_path))
    out = workspace / "out"
    out.mkdir()
    (out / "0000-pod-old.yaml").write_text("kind: Pod\n")
    (workspace / "keep.txt").write_text("untouched\n")
    bad = workspace / "input.yaml"
    bad.write_bytes(content)
    before = _tree(workspace)
    for command in (
        ["render", str(bad), "-o", str(out)],
        ["check", str(bad)],
        ["render", str(bad)],
    ):
        assert main(command) == 2, command
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        assert "error" in captured.err
        assert command[-1] == str(bad) or captured.out == ""
        assert _tree(workspace) == before
    bad.unlink()
    return captured.err


def _example_text(example: Any) -> str:
    return str(example.path.read_text())


@pytest.mark.parametrize("example", examples(), ids=lambda e: e.name)
def test_cli_rejects_broken_yaml_and_duplicates(
    example: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _example_text(example)
    err = _render_fails(tmp_path, (text + "\n  broken: [unclosed\n").encode(), capsys)
    assert re.search(r"invalid YAML at line \d+, column \d+", err), err
    err = _render_fails(tmp_path, (text + "\n---\n" + text).encode(), capsys)
    assert "already renders" in err or "named" in err, err
    docs = example.copy_docs()
    knob = next(iter(knobs(example)), None)
    if knob is not None:
        knob.apply(docs, -1)
        err = _render_fails(tmp_path, dump_all(docs).encode(), capsys)
        assert user_path(docs, knob.doc, knob.path) in err, err


def test_duplicate_jobs_are_reported_against_the_second() -> None:
    docs = load_all((ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_text())
    with pytest.raises(SpecError) as err:
        run(parse_documents([*docs, *copy.deepcopy(docs)]))
    assert {f.code for f in err.value.errors} == {"name.duplicate"}
    assert all(f.path.startswith("jobs[1] → TFJob kubeflow/mnist") for f in err.value.errors)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "holds no YAML documents"),
        (b"# only a comment\n", "holds no YAML documents"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "is a binary file"),
        (b"kind: \xff\xfe\n", "is not UTF-8 text"),
        (b"jobs: [\n", "invalid YAML"),
        (b"42\n", "a job must be a mapping"),
        (b"apiVersion: kubeflow.org/v1\nkind: tfjob\n", "did you mean 'TFJob'"),
    ],
    ids=["empty", "comment", "binary", "not-utf8", "syntax", "scalar", "kind"],
)
def test_cli_rejects_bad_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, fragment: str
) -> None:
    assert fragment in _render_fails(tmp_path, content, capsys)


def test_cli_rejects_a_50_mb_file_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A sparse file: 50 MB long, next to nothing on disk, deleted at the end.
    text = (ROOT / "examples" / "tf-mnist" / "tfjob.yaml").read_bytes()
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:
        handle.write(text)
        handle.truncate(50 * 1024 * 1024)
    assert big.stat().st_size > FILE_BYTES.value()
    workspace = tmp_path / "workspace"
    (workspace / "out").mkdir(parents=True)
    (workspace / "out" / "old.yaml").write_text("kind: Pod\n")
    before = _tree(workspace)
    assert main(["render", str(big), "-o", str(workspace / "out")]) == 2
    err = capsys.readouterr().err
    assert f"trainjobs allows at most {FILE_BYTES.value():,} bytes" in err
    assert FILE_BYTES.env in err
    assert "Traceback" not in err
    assert _tree(workspace) == before
    big.unlink()


def test_stack_files_with_bad_entries_name_the_entry(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(
        "config:\n  trainjobs:jobs:\n    - file: missing.yaml\n    - 42\n  trainjobs:target: podz\n"
    )
    with pytest.raises(SpecError) as err:
        load_path(stack)
    paths = {f.path for f in err.value.errors}
    assert {"jobs[0].file", "jobs[1]", "trainjobs:target"} <= paths, paths


def test_some_job_names_need_shortening() -> None:
    # Guards the test above against passing because no name was ever too long.
    shortened = set()
    for example in examples():
        if "pods" not in example.targets or max_name_length(example) < LABEL_LIMIT:
            continue
        docs = example.copy_docs()
        with_names(docs, "n" * LABEL_LIMIT)
        for manifest in run(stack_of(docs), target="pods").manifests:
            if re.search(r"-[0-9a-f]{8}$", manifest["metadata"]["name"]):
                shortened.add(example.name)
    assert len(shortened) >= 2, shortened
