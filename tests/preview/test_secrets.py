"""Secret values: compared by keyed fingerprint, never shown."""

from __future__ import annotations

import base64
from typing import Any

from trainjobs.k8s.generated import placeholder
from trainjobs.k8s.redact import REDACTED
from trainjobs.preview.secrets import SecretNumbers, fingerprint, mask_secrets


def _secret(field: str, value: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, field: {"k": value}}


def test_data_and_string_data_of_the_same_bytes_match() -> None:
    key = b"store-key"
    encoded = base64.b64encode(b"hunter2").decode()
    masked_data = mask_secrets(_secret("data", encoded), key)["data"]["k"]
    masked_string = mask_secrets(_secret("stringData", "hunter2"), key)["stringData"]["k"]
    assert masked_data == masked_string == fingerprint(b"hunter2", key)
    assert masked_data.startswith("<redacted:") and len(masked_data) == len("<redacted:>") + 12


def test_the_key_changes_the_fingerprint() -> None:
    assert fingerprint(b"hunter2", b"a") != fingerprint(b"hunter2", b"b")


def test_placeholders_and_redacted_values_pass_through() -> None:
    generated = placeholder("password", "training/redis")
    assert mask_secrets(_secret("stringData", generated), b"k")["stringData"]["k"] == generated
    assert mask_secrets(_secret("data", REDACTED), b"k")["data"]["k"] == REDACTED


def test_other_kinds_are_untouched_and_the_input_is_not_changed() -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}
    assert mask_secrets(config, b"k") == config
    secret = _secret("stringData", "hunter2")
    mask_secrets(secret, b"k")
    assert secret["stringData"]["k"] == "hunter2"


def test_numbers_match_equal_values_and_say_nothing_of_them() -> None:
    numbers = SecretNumbers()
    encoded = base64.b64encode(b"hunter2").decode()
    first = numbers.mask(_secret("data", encoded))["data"]["k"]
    again = numbers.mask(_secret("stringData", "hunter2"))["stringData"]["k"]
    other = numbers.mask(_secret("stringData", "hunter3"))["stringData"]["k"]
    assert (first, again, other) == ("<redacted:#1>", "<redacted:#1>", "<redacted:#2>")
