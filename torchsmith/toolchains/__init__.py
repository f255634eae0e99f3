"""Toolchain provisioning without root: CUDA toolkits (:mod:`.cuda`), the host compiler each
CUDA accepts (:mod:`.compiler`), Python environments (:mod:`.python`) and math libraries
(:mod:`.mathlibs`). Selection is pure (plan time); provisioning writes only into torchsmith's
own cache directory and records every package it used.

Entry points:

* planner: ``cuda.select_toolkit(cuda, host, wanted=None) -> (provider, reason)`` (raises
  PlanError naming container image / NVIDIA repo / conda), ``cuda.toolkit_problem(cuda, host)``
  (the same as a Problem, for collecting), ``cuda.offers(cuda, host)`` (per provider, e.g.
  PyPI "libraries" only for 11.x/12.x); ``compiler.select_host_compiler(cuda_rel, release, host,
  wanted) -> CompilerChoice`` and ``compiler.require_host_compiler(choice, host, install_deps)``;
  ``mathlibs.plan_math_libraries(MathInputs(...))``; ``python.select_build_python(host, ver)``.
* pipeline: ``provision.provision_toolkit(cuda, toolkit, host, ProvideContext(...))`` and
  ``provision.toolkit_build_env(record, env)``; ``CompilerChoice.env()``/``nvcc_flags()``;
  ``compiler.install_compiler`` (--install-deps); ``python.provision_python``,
  ``python.numpy_pins`` + ``python.apply_pins``; ``mathlibs.wheel_env``.
"""
