"""``make bench-cluster``: big jobs through the real engine, provider and control plane.

One TFJob on the pods target (a chief, a parameter server and N workers: a Pod and a
Service each) brought up three ways in one run against one control plane, side by side,
each size in turn: trainjobs' stack program, the same render through a raw
``pulumi_kubernetes.yaml.v2.ConfigFile`` program (``bench/cluster/raw``), and
``kubectl apply --server-side``. See ``bench/cluster/run.py`` and BENCHMARKS.md.
"""
