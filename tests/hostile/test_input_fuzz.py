"""A fuzzer of the loader: random YAML text, and random mutations of every example.

Whatever the input, loading and checking it ends in a stack or in findings (SpecError),
never in another exception; no finding says "fix this field" or shows a Python
``None``; and every finding of a mutated example names a place. The budget is fixed
(``max_examples``, derandomized) so it runs in ``make test`` in well under a minute.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.paths import example_job_files, stack_files
from trainjobs.check import run
from trainjobs.errors import Finding, SpecError
from trainjobs.k8s.yamlio import YamlSyntaxError, load_all
from trainjobs.spec import parse_documents, parse_stack

FUZZ = settings(
    max_examples=300,
    deadline=None,  # a busy CI machine says nothing about a slow input; CPU bounds do
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_PYTHON_REPR = re.compile(r"\b(None|<pulumi\.output|object at 0x)")


def _assert_for_people(findings: Sequence[Finding]) -> None:
    for finding in findings:
        text = finding.render()
        assert "fix: fix this field" not in text, text
        assert not _PYTHON_REPR.search(text), text
        assert finding.message, text


def _load_and_check(docs: list[Any], base_dir: Path) -> None:
    """Load ``docs`` as a file's documents and run every check: findings only."""
    try:
        stack = parse_documents(docs, source="fuzz.yaml", base_dir=base_dir)
        rendering = run(stack)
    except SpecError as exc:
        assert exc.findings
        _assert_for_people(exc.findings)
        return
    _assert_for_people(rendering.findings)


YAML_ALPHABET = st.sampled_from(
    [
        *"abkindspecmetadataname: -[]{},&*!|>'\"#%@`?\n\t0123456789.=<~",
        *["apiVersion: kubeflow.org/v1\n", "kind: TFJob\n", "  ", "- ", ": ", "&a ", "*a", "<<: "],
    ]
)


@FUZZ
@given(st.lists(YAML_ALPHABET, max_size=80).map("".join))
def test_random_yaml_ends_in_a_stack_or_findings(text: str) -> None:
    try:
        docs = load_all(text, "fuzz.yaml")
    except YamlSyntaxError as exc:
        assert exc.problem and exc.hint
        return
    _load_and_check(docs, Path.cwd())


def _files() -> list[Path]:
    return [*example_job_files(), *stack_files()]


HOSTILE_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(
        ["", "A=B", "1e999999999", "<generated:password:a/b>", "../../etc/passwd", "\x00", "-1"]
    ),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=8), st.integers(), max_size=3),
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document: the keys and indexes down to it."""
    places = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            places += _paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            places += _paths(value, (*prefix, i))
    return places


def _mutate(doc: Any, place: tuple[Any, ...], how: str, value: Any) -> Any:
    doc = copy.deepcopy(doc)
    if not place:
        return value if how == "replace" else doc
    parent = doc
    for step in place[:-1]:
        parent = parent[step]
    last = place[-1]
    if how == "delete":
        del parent[last]
    elif how == "extra" and isinstance(parent, dict):
        parent[f"{last}x"] = value
    else:
        parent[last] = value
    return doc


@st.composite
def mutated_examples(draw: st.DrawFn) -> tuple[list[Any], Path]:
    """An example file's documents with one to three places replaced, deleted or doubled."""
    path = draw(st.sampled_from(_files()))
    docs = load_all(path.read_text(), str(path))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        index = draw(st.integers(min_value=0, max_value=len(docs) - 1))
        place = draw(st.sampled_from(_paths(docs[index])))
        how = draw(st.sampled_from(["replace", "delete", "extra"]))
        docs[index] = _mutate(docs[index], place, how, draw(HOSTILE_VALUES))
    return docs, path.parent


@FUZZ
@given(mutated_examples())
def test_mutated_examples_end_in_a_stack_or_findings(case: tuple[list[Any], Path]) -> None:
    docs, base_dir = case
    first = docs[0] if docs else None
    if isinstance(first, dict) and "config" in first and "apiVersion" not in first:
        # A stack config, loaded as load_path loads one.
        config = first.get("config")
        try:
            if not isinstance(config, dict):
                raise SpecError.from_findings([Finding("t", "config", "not a mapping")])
            stack = parse_stack(config, source="fuzz.yaml", base_dir=base_dir)
            _assert_for_people(run(stack).findings)
        except SpecError as exc:
            _assert_for_people(exc.findings)
        return
    _load_and_check(docs, base_dir)
