"""Baselines for the paper's comparisons: MODELS of container-per-function platforms, not the products.

OpenWhisk and Greengrass cannot be installed here; these reproduce how OpenWhisk executes a sequence (controller,
Kafka, invoker, a pool of warm containers with an action server each) and a container-per-call platform, so the
benchmarks can measure SAND against the same mechanisms on the same machine. docs/benchmarks.md ("Baselines: models
of container-per-function platforms") says what each model reproduces and what it does not.

    from benchmarks.baselines import WarmContainerPlatform
    with WarmContainerPlatform() as p:            # Kafka of `make up`, image sand-sandbox:latest
        p.deploy("f1", F1_SOURCE); p.deploy("f2", F2_SOURCE)
        r = p.invoke(["f1", "f2"], {})            # Result: output, error, hops (timestamps), interactions_ns()
        p.deploy_zip("f3", zip_action({"f3.py": path}, packages=pip_target_folder), entry="f3")
"""

from benchmarks.baselines._platform import ColdContainerPlatform, WarmContainerPlatform, cleanup_leftovers
from benchmarks.baselines._result import Hop, Result
from benchmarks.baselines._zip import zip_action

__all__ = ["ColdContainerPlatform", "Hop", "Result", "WarmContainerPlatform", "cleanup_leftovers", "zip_action"]
