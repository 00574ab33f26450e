from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from trainjobs.k8s.order import sort_for_apply
from trainjobs.k8s.redact import REDACTED, redact
from trainjobs.k8s.yamlio import YamlSyntaxError, dump_all, dump_one, dump_one_pyyaml, load_all


def test_dump_keeps_order_ints_and_quotes_ambiguous_strings() -> None:
    text = dump_one({"kind": "Pod", "a": 1, "b": "1", "c": "yes", "d": "on", "e": 2.5})
    assert text == "kind: Pod\na: 1\nb: '1'\nc: 'yes'\nd: 'on'\ne: 2.5\n"


def test_multiline_strings_are_literal_blocks() -> None:
    text = dump_one({"hostfile": "a slots=1\nb slots=1\n"})
    assert text == "hostfile: |\n  a slots=1\n  b slots=1\n"
    assert load_all(text) == [{"hostfile": "a slots=1\nb slots=1\n"}]


def test_no_aliases_for_shared_objects() -> None:
    shared = {"x": 1}
    assert "&" not in dump_one({"a": shared, "b": shared})


def test_dump_all_and_load_all_round_trip() -> None:
    objs = [{"kind": "A"}, {"kind": "B"}]
    assert load_all(dump_all(objs)) == objs


def test_syntax_error_names_line_and_column() -> None:
    with pytest.raises(YamlSyntaxError) as err:
        load_all("a: [1, 2\nb: 3\n", "jobs.yaml")
    assert str(err.value).startswith("jobs.yaml: invalid YAML at line ")


def test_a_tab_in_the_indentation_is_named() -> None:
    # libyaml's "found character that cannot start any token" does not say it is a tab.
    with pytest.raises(YamlSyntaxError) as err:
        load_all("spec:\n\treplicas: 2\n", "jobs.yaml")
    assert err.value.problem == (
        "invalid YAML at line 2, column 1: a tab, and YAML indents with spaces only"
    )
    assert err.value.hint == "replace the tab with spaces"
    # A tab inside a value is text, not an error.
    assert load_all("a: 'x\ty'\n") == [{"a": "x\ty"}]


def test_sort_for_apply_is_stable_by_rank() -> None:
    objs = [
        {"kind": "Pod", "n": 1},
        {"kind": "Service", "n": 2},
        {"kind": "TFJob", "n": 3},
        {"kind": "CustomResourceDefinition", "n": 4},
        {"kind": "Pod", "n": 5},
        {"kind": "Namespace", "n": 6},
    ]
    assert [o["n"] for o in sort_for_apply(objs)] == [4, 6, 2, 1, 5, 3]


def test_redact_replaces_secret_values_only() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "data": {"k": "c2VjcmV0"},
        "stringData": {"p": "x"},
    }
    assert redact(secret)["data"] == {"k": REDACTED}
    assert redact(secret)["stringData"] == {"p": REDACTED}
    assert secret["data"] == {"k": "c2VjcmV0"}
    config = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}
    assert redact(config) == config


_json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False),
    st.text(),
    st.sampled_from(
        [
            "yes",
            "No",
            "on",
            "~",
            "null",
            "1e3",
            "0x1F",
            "1:20",
            "2001-12-14",
            "<<",
            "=",
            "- a",
            "a: b",
            "#x",
            " x",
            "x ",
            "a\nb",
            "a\n",
            "\n",
            "a\n\n",
            "\tx\ny",
            "'",
            '"',
            "%x",
            "@x",
            "!x",
        ]
    ),
)
_json = st.recursive(
    _json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(max_size=12), _json, max_size=5))
def test_fast_emitter_round_trips_any_json_shaped_data(doc: dict[str, Any]) -> None:
    assert yaml.safe_load(dump_one(doc)) == (doc or {})


def test_fast_emitter_matches_pyyaml_on_every_snapshot_input() -> None:
    from tests.support.paths import example_job_files, stack_files
    from trainjobs.check import run
    from trainjobs.spec import load_path

    for path in [*stack_files(), *example_job_files()]:
        for manifest in run(load_path(path)).manifests:
            assert dump_one(manifest) == dump_one_pyyaml(manifest)


def test_double_quoted_escapes_match_pyyaml() -> None:
    # Tabs in multi-line text (CRD descriptions) force double quotes; both emitters
    # must write PyYAML's short escapes and upper-case hex.
    for text in ["a\tb\nc", 'q"\\\x85\u2028\ufeff\x01\x7f\U0001f600\n', "\x00\x1b\n"]:
        assert dump_one({"d": text}) == dump_one_pyyaml({"d": text})
    assert dump_one({"d": "a\tb\nc"}) == 'd: "a\\tb\\nc"\n'


# Strings built from the characters that steer PyYAML's scalar analysis (indicators,
# spaces, document markers) so the fast path's regular expressions meet every branch.
_steering = st.text(alphabet=st.sampled_from(list("-?:#,[]{}&*!|>'\"%@`. ax0")), max_size=8)


@settings(max_examples=600, deadline=None, derandomize=True)
@given(st.one_of(_steering, st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126))))
def test_scalar_fast_path_decides_as_pyyaml_analyze_scalar(text: str) -> None:
    from trainjobs.k8s._emitter import _ANALYSER, _analysis

    if not text:
        return
    analysis = _ANALYSER.analyze_scalar(text)
    assert _analysis(text) == (analysis.allow_block_plain, analysis.allow_single_quoted)
    assert dump_one({"k": text, text: 1}) == dump_one_pyyaml({"k": text, text: 1})


def test_scalar_fast_path_examples() -> None:
    from trainjobs.k8s._emitter import _analysis

    assert _analysis("worker-0.ns.svc:2222") == (True, True)
    assert _analysis('{"cluster": {"worker": ["a:1"]}}') == (False, True)
    assert _analysis("a: b") == (False, True)
    assert _analysis("a #b") == (False, True)
    assert _analysis("a#b") == (True, True)
    assert _analysis("- x") == (False, True)
    assert _analysis("-x") == (True, True)
    assert _analysis("trailing ") == (False, True)


def test_a_duplicate_key_is_refused_at_its_first_place_in_the_file() -> None:
    text = "a:\n  x: 1\n  x: 2\nb:\n  y: 1\n  y: 2\n"
    with pytest.raises(YamlSyntaxError, match="duplicate key 'x' at line 3"):
        load_all(text, "f.yaml")


def test_merge_keys_may_be_overridden_and_aliases_shared() -> None:
    text = "base: &b {cpu: 1, mem: 2}\njob: {<<: *b, cpu: 4}\ncopy: *b\n"
    assert load_all(text) == [
        {"base": {"cpu": 1, "mem": 2}, "job": {"cpu": 4, "mem": 2}, "copy": {"cpu": 1, "mem": 2}}
    ]


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    with pytest.raises(YamlSyntaxError) as err:
        load_all("\n".join(lines), "bomb.yaml")
    assert "TRAINJOBS_MAX_YAML_NODES" in err.value.problem
    assert "TRAINJOBS_MAX_YAML_NODES" in err.value.hint


def test_commas_inside_quoted_strings_are_not_counted_as_values() -> None:
    # A pod's TF_CONFIG lists every host of the job: a 1,024-worker render holds a
    # million commas, all inside quoted strings, and must load (preview reads it back).
    hosts = ",".join(f'"w-{i}.ns.svc:2222"' for i in range(200_000))
    text = f'kind: Pod\nenv: \'{{"cluster": [{hosts}]}}\'\nother: "a,b\\",c"\n'
    docs = load_all(text)
    assert docs[0]["kind"] == "Pod"
    assert docs[0]["env"].count(",") == 199_999
    with pytest.raises(YamlSyntaxError, match="lines and commas"):
        load_all("[" + "1," * 200_000 + "1]")
