"""Resources that generate a secret once per stack: a password and an ECDSA P-521 key pair.

They are Pulumi dynamic resources: their provider is this module, run by the
``pulumi-resource-pulumi-python`` plugin that ships with every Pulumi CLI, so a stack
needs no extra provider plugin (the random and tls providers did). The value is made in
``create`` with the standard library's ``secrets`` (password) or ``cryptography`` (key
pair) and kept in Pulumi's state as a secret output; an update never makes a new one
(``diff`` replaces only when what is generated changes: the kind of value or its length).

The provider is pickled into the state by reference (``trainjobs.components.generators``
and its class name), so the plugin's Python must import ``trainjobs``: the program's own
environment, which the plugin runs (``PULUMI_PYTHON_CMD`` or the project's virtualenv).
"""

from __future__ import annotations

import secrets
import string
import uuid
from typing import Any

import pulumi
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from pulumi.dynamic import (
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    ResourceProvider,
    UpdateResult,
)

__all__ = [
    "ALPHABET",
    "GeneratedKeyPair",
    "GeneratedPassword",
    "KeyPairProvider",
    "PasswordProvider",
    "generate_key_pair",
    "generate_password",
]

ALPHABET = string.ascii_letters + string.digits
"""A generated password's characters: letters and digits, safe unquoted in a command line
(``--requirepass $(REDIS_PASSWORD)``), a URL or an env var."""


def generate_password(length: int) -> str:
    """``length`` characters of :data:`ALPHABET` from the system's secure random source."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def generate_key_pair() -> tuple[str, str]:
    """A new ECDSA P-521 key pair (the curve the MPI Operator uses): the private key as
    PEM (``EC PRIVATE KEY``) and the public key as one ``authorized_keys`` line."""
    key = ec.generate_private_key(ec.SECP521R1())
    private = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    ).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    return private, public.decode() + "\n"


class _GeneratorProvider(ResourceProvider):
    """Create generates; nothing else ever does. ``inputs`` name what decides the value."""

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()

    def generate(self, props: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def _own(self, props: dict[str, Any]) -> dict[str, Any]:
        return {k: props.get(k) for k in self.inputs}

    def create(self, props: dict[str, Any]) -> CreateResult:
        return CreateResult(uuid.uuid4().hex, {**self._own(props), **self.generate(props)})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # `olds` are the stored outputs: the inputs that decided the value, and the value.
        changed = [k for k in self.inputs if olds.get(k) != news.get(k)]
        return DiffResult(changes=bool(changed), replaces=changed, delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        # Never reached (every change replaces); kept so a value can never be regenerated.
        return UpdateResult({**self._own(news), **{k: olds.get(k) for k in self.outputs}})

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        return ReadResult(id_, props)


class PasswordProvider(_GeneratorProvider):
    """Generates ``result``: a password of ``length`` letters and digits."""

    inputs = ("length",)
    outputs = ("result",)

    def generate(self, props: dict[str, Any]) -> dict[str, Any]:
        return {"result": generate_password(int(props["length"]))}


class KeyPairProvider(_GeneratorProvider):
    """Generates ``private_key_pem`` and ``public_key_openssh``: an ECDSA key pair."""

    inputs = ("algorithm",)
    outputs = ("private_key_pem", "public_key_openssh")

    def generate(self, props: dict[str, Any]) -> dict[str, Any]:
        private, public = generate_key_pair()
        return {"private_key_pem": private, "public_key_openssh": public}


def _secret_outputs(
    opts: pulumi.ResourceOptions | None, names: tuple[str, ...]
) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions.merge(
        opts, pulumi.ResourceOptions(additional_secret_outputs=list(names))
    )


class GeneratedPassword(Resource, module="trainjobs", name="GeneratedPassword"):
    """A password generated once per stack and kept as a secret (output ``result``)."""

    result: pulumi.Output[str]

    def __init__(
        self, name: str, length: int = 32, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {"length": length, "result": None}
        super().__init__(
            PasswordProvider(), name, props, _secret_outputs(opts, PasswordProvider.outputs)
        )


class GeneratedKeyPair(Resource, module="trainjobs", name="GeneratedKeyPair"):
    """An ECDSA P-521 key pair generated once per stack and kept as secrets (outputs
    ``private_key_pem``, ``public_key_openssh``)."""

    private_key_pem: pulumi.Output[str]
    public_key_openssh: pulumi.Output[str]

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"algorithm": "ECDSA-P521", "private_key_pem": None, "public_key_openssh": None}
        super().__init__(
            KeyPairProvider(), name, props, _secret_outputs(opts, KeyPairProvider.outputs)
        )
