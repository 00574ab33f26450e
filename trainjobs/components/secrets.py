"""Values generated at apply time: placeholders in manifests → Pulumi secrets.

A render never holds a key or a password; it holds a placeholder
(``trainjobs.k8s.generated``). Here each placeholder group becomes one resource
that generates the value once per stack and keeps it in Pulumi's state as a
secret: a ``tls.PrivateKey`` (ECDSA P-521, the curve the MPI Operator uses) for
key pairs, a ``random.RandomPassword`` for passwords.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_random as random
import pulumi_tls as tls

from trainjobs.k8s import generated

__all__ = ["GeneratedValues", "has_placeholders"]

PASSWORD_LENGTH = 32


def has_placeholders(value: Any) -> bool:
    """Whether any string inside ``value`` is a placeholder."""
    if isinstance(value, Mapping):
        return any(has_placeholders(v) for v in value.values())
    if isinstance(value, list):
        return any(has_placeholders(v) for v in value)
    return generated.parse(value) is not None


class GeneratedValues:
    """Creates the generating resources of one component, each group once."""

    def __init__(self, parent: pulumi.Resource) -> None:
        self._opts = pulumi.ResourceOptions(parent=parent)
        self._keys: dict[str, tls.PrivateKey] = {}
        self._passwords: dict[str, random.RandomPassword] = {}

    def _key(self, group: str) -> tls.PrivateKey:
        if group not in self._keys:
            self._keys[group] = tls.PrivateKey(
                group, algorithm="ECDSA", ecdsa_curve="P521", opts=self._opts
            )
        return self._keys[group]

    def value(self, placeholder: generated.Generated) -> pulumi.Output[str]:
        """The secret output that replaces ``placeholder``."""
        if placeholder.kind == "ecdsa-p521-private":
            return pulumi.Output.secret(self._key(placeholder.group).private_key_pem)
        if placeholder.kind == "ecdsa-p521-public":
            return pulumi.Output.secret(self._key(placeholder.group).public_key_openssh)
        if placeholder.group not in self._passwords:
            self._passwords[placeholder.group] = random.RandomPassword(
                placeholder.group, length=PASSWORD_LENGTH, special=False, opts=self._opts
            )
        return pulumi.Output.secret(self._passwords[placeholder.group].result)

    def substitute(self, value: Any) -> Any:
        """``value`` with every placeholder replaced by its secret output."""
        if isinstance(value, Mapping):
            return {k: self.substitute(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        found = generated.parse(value)
        return self.value(found) if found is not None else value
