"""Which parts of the host probe a command reads, so that a plan starts only the processes its
answer depends on (issue 26: the first ``torchsmith plan`` on a machine asked every build and
container tool its version, and the docker daemon, for facts no plan reads).

The OS, cores, RAM, free disk and glibc (:mod:`torchsmith.host.system`: files and system calls,
no process but ``ldd`` where ``os.confstr`` has no answer) are always probed. The other sections:

* ``compilers``, ``pythons``: the planner's compiler and interpreter choices
  (``planner/toolchain.py``, ``planner/versions.py``, ``planner/free_threaded.py``).
* ``cuda``: the toolkit choice and its readiness row (``planner/toolkit_offers.py``,
  ``planner/readiness.py``) and a build's toolkit provider (``steps/toolchain.py``) — read only
  for a CUDA build (``resolve_toolkit`` returns before them for a CPU one).
* ``gpus``: ``--gpu native`` and the default arch list (``planner/archs.py``, CUDA builds only),
  and a container's view of this machine (``container/images.py``: GPUs and driver).
* ``tools`` (cmake, ninja, docker and its daemon, …) and ``libraries`` (cuDNN/NCCL headers and
  ``ldconfig -p``): read by ``torchsmith host`` and ``torchsmith doctor`` (each probes
  everything), never by a plan: the build checks its own tools when it runs them, and the
  planner's one look at ``tools`` (``has_apt``: ``apt-get``/``dpkg``) finds them only in
  recorded facts (:data:`torchsmith.host.tools.TOOL_NAMES` has neither), so it is the same
  without the section.

A section left out is said in the facts' warnings (:data:`LEFT_OUT`), never dropped silently;
``tests/unit/host/test_scope.py`` checks that every recorded request of
``tests/fixtures/plan/public-requests.toml`` plans the same with the facts of
:func:`for_spec` as with all of them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from torchsmith.spec import BuildSpec

Section = Literal["compilers", "cuda", "gpus", "pythons", "tools", "libraries"]
SECTIONS: tuple[Section, ...] = get_args(Section)
EVERYTHING: frozenset[Section] = frozenset(SECTIONS)
PLANNING: frozenset[Section] = frozenset({"compilers", "cuda", "gpus", "pythons"})
"""What any plan may read (a command that plans a request it has not resolved yet)."""
LEFT_OUT = "not probed (the command does not read them): "
FIELDS: dict[Section, tuple[str, ...]] = {
    "compilers": ("compilers",),
    "cuda": ("cuda_toolkits",),
    "gpus": ("gpus", "driver_version", "driver_cuda"),
    "pythons": ("pythons",),
    "tools": ("tools",),
    "libraries": ("cudnn_versions", "nccl_versions"),
}
"""The :class:`~torchsmith.host.model.HostFacts` fields each section fills (left at their
defaults when it is not probed)."""


def for_spec(spec: BuildSpec) -> frozenset[Section]:
    """The sections a plan of ``spec`` reads (and a build of it: the same facts)."""
    cuda = spec.cuda is not None or spec.against is not None
    if spec.backend == "docker":  # planned in the image's facts: this machine's cores, RAM, GPUs
        return frozenset({"gpus"}) if cuda else frozenset()
    return PLANNING if cuda else frozenset({"compilers", "pythons"})  # CPU: no toolkit, no GPU


def left_out(sections: frozenset[Section]) -> list[str]:
    """The warning that names the sections not probed (none: no warning)."""
    missing = [s for s in SECTIONS if s not in sections]
    return [LEFT_OUT + ", ".join(missing)] if missing else []
