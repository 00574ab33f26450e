"""Values generated at apply time: placeholders in manifests → Pulumi secrets.

A render never holds a key or a password; it holds a placeholder
(``trainjobs.k8s.generated``). Here each placeholder group becomes one resource
that generates the value once per stack and keeps it in Pulumi's state as a
secret: a :class:`GeneratedKeyPair` (ECDSA P-521, the curve the MPI Operator uses) for
key pairs, a :class:`GeneratedPassword` for passwords — trainjobs' own dynamic resources
(``components.generators``), which need no provider plugin beyond the Pulumi CLI's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import pulumi

from trainjobs.components.generators import GeneratedKeyPair, GeneratedPassword
from trainjobs.k8s import generated

__all__ = ["GeneratedValues", "generate_with", "has_placeholders", "placeholder_groups"]

PASSWORD_LENGTH = 32


class _Password(Protocol):
    result: pulumi.Output[str]


class _KeyPair(Protocol):
    private_key_pem: pulumi.Output[str]
    public_key_openssh: pulumi.Output[str]


_MAKERS: dict[str, Callable[..., Any]] = {
    "password": GeneratedPassword,
    "key_pair": GeneratedKeyPair,
}


def generate_with(password: Callable[..., _Password], key_pair: Callable[..., _KeyPair]) -> None:
    """Make later components generate with these resource classes (called as
    ``password(name, length=…, opts=…)``, ``key_pair(name, opts=…)``) instead of the
    dynamic resources: the component provider serves its own (``trainjobs.provider``),
    as a program in another language has no Python to run dynamic resources."""
    _MAKERS.update(password=password, key_pair=key_pair)


def has_placeholders(value: Any) -> bool:
    """Whether any string inside ``value`` is a placeholder."""
    if isinstance(value, Mapping):
        return any(has_placeholders(v) for v in value.values())
    if isinstance(value, list):
        return any(has_placeholders(v) for v in value)
    return generated.parse(value) is not None


def placeholder_groups(value: Any, kind: str) -> list[str]:
    """The groups of every ``kind`` placeholder inside ``value``, in order, once each."""
    found: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, Mapping):
            for v in item.values():
                walk(v)
        elif isinstance(item, list):
            for v in item:
                walk(v)
        else:
            parsed = generated.parse(item)
            if parsed is not None and parsed.kind == kind and parsed.group not in found:
                found.append(parsed.group)

    walk(value)
    return found


class GeneratedValues:
    """Creates the generating resources of one component, each group once."""

    def __init__(
        self,
        parent: pulumi.Resource,
        prefix: str = "",
        passwords: Mapping[str, pulumi.Input[str]] | None = None,
    ) -> None:
        """``prefix`` scopes the generating resources' names as the component's
        children are scoped; ``passwords`` (group → Input) are given by the user
        (a secret manager's value) and are used instead of generating one."""
        self._parent = parent
        self._prefix = prefix
        self._keys: dict[str, _KeyPair] = {}
        self._passwords: dict[str, _Password] = {}
        self._given = dict(passwords or {})

    def _opts(self, group: str) -> tuple[str, pulumi.ResourceOptions]:
        if not self._prefix:
            return group, pulumi.ResourceOptions(parent=self._parent)
        # The unscoped name stays an alias: a stack made before names were scoped
        # keeps its key instead of generating (and rolling out) a new one.
        alias = [pulumi.Alias(name=group)]
        return f"{self._prefix}:{group}", pulumi.ResourceOptions(parent=self._parent, aliases=alias)

    def _key(self, group: str) -> _KeyPair:
        if group not in self._keys:
            name, opts = self._opts(group)
            self._keys[group] = _MAKERS["key_pair"](name, opts=opts)
        return self._keys[group]

    def value(self, placeholder: generated.Generated) -> pulumi.Output[str]:
        """The secret output that replaces ``placeholder``."""
        if placeholder.kind == "ecdsa-p521-private":
            return pulumi.Output.secret(self._key(placeholder.group).private_key_pem)
        if placeholder.kind == "ecdsa-p521-public":
            return pulumi.Output.secret(self._key(placeholder.group).public_key_openssh)
        if placeholder.group in self._given:
            return pulumi.Output.secret(self._given[placeholder.group])
        if placeholder.group not in self._passwords:
            name, opts = self._opts(placeholder.group)
            self._passwords[placeholder.group] = _MAKERS["password"](
                name, length=PASSWORD_LENGTH, opts=opts
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
