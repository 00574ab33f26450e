"""Helpers of the seed frameworks: stable run ids, Go-style JSON, volume mount checks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trainjobs.frameworks._seed import compact_json, mount_findings, stable_base36, stable_digits


@given(st.text(min_size=1, max_size=80))
def test_run_ids_are_stable_and_shaped_like_upstreams(key: str) -> None:
    digits = stable_digits(key)
    assert digits == stable_digits(key)
    assert len(digits) == 10 and digits.isdigit() and digits[0] != "0"
    short = stable_base36(key)
    assert short == stable_base36(key)
    assert len(short) == 4 and set(short) <= set("0123456789abcdefghijklmnopqrstuvwxyz")


def test_known_values() -> None:
    assert stable_digits("default/example-job") == "3393339803"
    assert stable_base36("default/ms-dist") == "mnfh"


def test_compact_json_keeps_the_order_given() -> None:
    assert compact_json({"task": {"type": "worker", "index": 1}, "a": []}) == (
        '{"task":{"type":"worker","index":1},"a":[]}'
    )


def test_mounts_without_volumes_and_twice_used_paths() -> None:
    template = {
        "spec": {
            "initContainers": [
                {"name": "init", "volumeMounts": [{"name": "gone", "mountPath": "/g"}]}
            ],
            "containers": [
                {
                    "name": "main",
                    "volumeMounts": [
                        {"name": "data", "mountPath": "/data"},
                        {"name": "data", "mountPath": "/data"},
                    ],
                }
            ],
            "volumes": [{"name": "data", "emptyDir": {}}],
        }
    }
    assert [(f.code, f.path, f.value) for f in mount_findings(template, "t")] == [
        ("template.volume_mount", "t.spec.initContainers[0].volumeMounts[0].name", "gone"),
        ("template.mount_path", "t.spec.containers[0].volumeMounts[1].mountPath", "/data"),
    ]
