"""Toolchain provisioning without root: CUDA toolkits (:mod:`.cuda`) and installing the plan's
host compiler (:mod:`.compiler`, ``--install-deps`` only). Decisions live in the planner; this
package carries them out, writing only into torchsmith's own cache and recording every package
it used.

Entry points:

* planner (pure): ``cuda.select_toolkit(cuda, host, wanted=None) -> (provider name, reason)``
  (raises PlanError naming the ways out), ``cuda.toolkit_problem(cuda, host)``,
  ``cuda.offers(cuda, host)`` (per provider, e.g. PyPI "libraries" only for 11.x/12.x).
* the ``toolchain`` step: ``provision.provision_toolkit`` / ``provision.provider_named(name)
  .provide(...)`` and ``provision.toolkit_build_env(record, env)``.
* preflight: ``compiler.install_compiler`` (--install-deps).
"""
