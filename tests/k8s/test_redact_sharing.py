"""Redaction copies on write: what holds no secret is shared, the input never changes."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trainjobs.k8s.redact import REDACTED, redact


def _pod(env: list[dict[str, Any]], args: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "env": env, "args": args},
                {"name": "side", "image": "j"},
            ],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
    }


def test_a_pod_without_secrets_shares_every_part() -> None:
    pod = _pod([{"name": "TF_CONFIG", "value": "{" + "x" * 50_000 + "}"}], ["--epochs", "3"])
    out = redact(pod)
    assert out == pod
    assert out is not pod
    assert out["spec"] is pod["spec"]
    assert out["metadata"] is pod["metadata"]


def test_only_the_path_to_a_secret_is_copied() -> None:
    pod = _pod([{"name": "REDIS_PASSWORD", "value": "hunter2"}], ["--requirepass", "s3"])
    before = copy.deepcopy(pod)
    out = redact(pod)
    assert pod == before  # the input is untouched
    first = out["spec"]["containers"][0]
    assert first["env"] == [{"name": "REDIS_PASSWORD", "value": REDACTED}]
    assert first["args"] == ["--requirepass", REDACTED]
    assert out["spec"]["containers"][1] is pod["spec"]["containers"][1]
    assert out["spec"]["volumes"] is pod["spec"]["volumes"]
    assert out["metadata"] is pod["metadata"]


_names = st.sampled_from(["PATH", "REDIS_PASSWORD", "API_TOKEN", "auth", "HOME", "MY_KEY"])
_values = st.text(alphabet="abc$()<>:-_", max_size=10)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(st.fixed_dictionaries({"name": _names, "value": _values}), max_size=5),
    st.lists(st.sampled_from(["--password", "--password=x", "y", "--auth", "z"]), max_size=6),
)
def test_redaction_never_changes_its_input(env: list[dict[str, Any]], args: list[str]) -> None:
    pod = _pod(env, args)
    before = copy.deepcopy(pod)
    out = redact(pod)
    assert pod == before
    assert redact(out) == out  # redacting twice changes nothing more
