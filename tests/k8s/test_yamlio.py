from __future__ import annotations

import pytest

from trainjobs.k8s.order import sort_for_apply
from trainjobs.k8s.redact import REDACTED, redact
from trainjobs.k8s.yamlio import YamlSyntaxError, dump_all, dump_one, load_all


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
