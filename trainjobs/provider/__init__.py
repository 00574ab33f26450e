"""The ``trainjobs`` component provider: the Python components for every Pulumi language.

``pulumi-resource-trainjobs`` (at the repository root) runs ``python -m
trainjobs.provider``, which serves ``trainjobs:index:TrainingJob``, the platform kinds
(``RedisBackend``, ``GpuNodePool``, ``TrainingOperator`` …) and ``Stack`` over the
provider protocol, with the schema :mod:`trainjobs.provider.schema` generates from the
models. Pulumi YAML uses it directly; TypeScript and Go through SDKs generated from the
schema (docs/languages.md). Python programs keep importing ``trainjobs.components``.
"""
