"""The generating resources (``components.generators``): values made once, kept secret.

Each test fails without the change that replaced ``random.RandomPassword`` and
``tls.PrivateKey`` with trainjobs' own dynamic resources (the module did not exist).
The real engine runs them in tests/cluster/pulumi_up/test_generated_secrets.py.
"""

from __future__ import annotations

import base64
import pickle

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pulumi.dynamic.dynamic import serialize_provider

from tests.support.pulumi_harness import run_program
from trainjobs.components.generators import (
    ALPHABET,
    GeneratedKeyPair,
    GeneratedPassword,
    KeyPairProvider,
    PasswordProvider,
    generate_key_pair,
    generate_password,
)

PROVIDER = "__provider"


def test_a_password_is_letters_and_digits_of_the_length_asked_and_never_repeats() -> None:
    made = {generate_password(32) for _ in range(20)}
    assert len(made) == 20
    assert all(len(p) == 32 and set(p) <= set(ALPHABET) for p in made)


def test_a_key_pair_is_ecdsa_p521_and_its_halves_belong_together() -> None:
    private, public = generate_key_pair()
    assert private.startswith("-----BEGIN EC PRIVATE KEY-----")
    key = serialization.load_pem_private_key(private.encode(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    assert isinstance(key.curve, ec.SECP521R1)
    mine = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    assert public == mine.decode() + "\n"
    assert public.startswith("ecdsa-sha2-nistp521 ")


def test_create_generates_and_keeps_the_inputs_that_decide_the_value() -> None:
    created = PasswordProvider().create({"length": 24, "result": None, PROVIDER: "p"})
    assert created.outs is not None
    assert set(created.outs) == {"length", "result"}
    assert created.outs["length"] == 24 and len(created.outs["result"]) == 24
    pair = KeyPairProvider().create({"algorithm": "ECDSA-P521", PROVIDER: "p"})
    assert pair.outs is not None
    assert set(pair.outs) == {"algorithm", "private_key_pem", "public_key_openssh"}


@pytest.mark.parametrize(
    ("news", "replaces"),
    [
        # A new trainjobs release pickles the provider anew: that alone is no change.
        ({"length": 32, "result": None, PROVIDER: "another pickle"}, []),
        ({"length": 40, "result": None, PROVIDER: "p"}, ["length"]),
    ],
)
def test_an_update_keeps_the_value_unless_what_is_generated_changes(
    news: dict[str, object], replaces: list[str]
) -> None:
    olds = {"length": 32, "result": "kept", PROVIDER: "p"}
    diff = PasswordProvider().diff("id", olds, news)
    assert diff.changes is bool(replaces)
    assert diff.replaces == replaces
    assert diff.delete_before_replace is False
    # Even if the engine asked for an update, the value would be the stored one.
    assert PasswordProvider().update("id", olds, news).outs["result"] == "kept"  # type: ignore[index]


def test_the_provider_is_stored_by_reference_not_as_code() -> None:
    """The state holds the provider's module and class name (small, no code, no value);
    the plugin imports trainjobs to run it."""
    stored = serialize_provider(KeyPairProvider())
    raw = base64.b64decode(stored)
    assert b"trainjobs.components.generators" in raw and b"KeyPairProvider" in raw
    assert len(raw) < 400
    assert isinstance(pickle.loads(raw), KeyPairProvider)


def test_generated_values_are_secret_outputs_of_dynamic_resources() -> None:
    resources = run_program(lambda: (GeneratedPassword("pw", length=20), GeneratedKeyPair("ssh")))
    by_name = {r.name: r for r in resources}
    assert by_name["pw"].type == "pulumi-python:dynamic/trainjobs:GeneratedPassword"
    assert by_name["pw"].inputs["length"] == 20
    assert by_name["pw"].options["secret_outputs"] == ["result"]
    assert by_name["ssh"].type == "pulumi-python:dynamic/trainjobs:GeneratedKeyPair"
    assert by_name["ssh"].options["secret_outputs"] == ["private_key_pem", "public_key_openssh"]
    # The pickled provider is a secret too (Pulumi's default for dynamic resources).
    assert PROVIDER in by_name["pw"].options["secret_inputs"]
