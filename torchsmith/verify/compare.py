"""Diff an :class:`Inspection` against :class:`Expectations`: one :class:`Check` per question."""

from __future__ import annotations

from collections.abc import Sequence

from torchsmith.inspect.gpucode import arch_sort_key
from torchsmith.inspect.model import Inspection
from torchsmith.verify.expect import Expectations
from torchsmith.verify.model import Check

_FEATURE_SETTING = {
    "distributed": "USE_DISTRIBUTED", "nccl": "USE_NCCL", "cudnn": "USE_CUDNN", "mkl": "USE_MKL",
    "mkldnn": "USE_MKLDNN", "fbgemm": "USE_FBGEMM", "xnnpack": "USE_XNNPACK",
    "nnpack": "USE_NNPACK", "qnnpack": "USE_PYTORCH_QNNPACK", "magma": "USE_MAGMA",
    "kineto": "USE_KINETO", "numa": "USE_NUMA", "miopen": "USE_MIOPEN",
}  # fmt: skip
_LINK_COMPONENTS = {"cuda": ("cudart", "cublas"), "cudnn": ("cudnn",), "nccl": ("nccl",)}


def _dotted(arch: str) -> str:
    """'sm_86' -> '8.6', 'compute_100a' -> '10.0a'."""
    tail = arch.split("_", 1)[1]
    digits = "".join(ch for ch in tail if ch.isdigit())
    return f"{digits[:-1]}.{digits[-1]}{tail[len(digits) :]}"


def _sorted(items: set[str]) -> list[str]:
    return sorted(items, key=arch_sort_key)


def arch_difference(kind: str, asked: Sequence[str], found: Sequence[str], where: str) -> str:
    """'' when equal, else e.g.
    "arch 8.6: asked for SASS, wheel has none; wheel has extra sm_90"."""
    missing = _sorted(set(asked) - set(found))
    extra = _sorted(set(found) - set(asked))
    parts = [f"arch {_dotted(a)}: asked for {kind}, {where} has none" for a in missing]
    if extra:
        parts.append(f"{where} has extra {' '.join(extra)}")
    return "; ".join(parts)


def _arch_check(name: str, kind: str, asked: Sequence[str], found: Sequence[str]) -> Check:
    diff = arch_difference(kind, asked, found, "wheel")
    return Check(
        name=name,
        ok=not diff,
        expected=" ".join(asked) or "none",
        actual=" ".join(found) or "none",
        detail=diff,
    )


def _library_archs(insp: Inspection, exp: Expectations) -> list[Check]:
    """A library may lack an arch (torch builds some kernels for fewer), never add one."""
    checks = []
    for lib in insp.libraries:
        if lib.gpu is None:
            continue
        found = [*lib.gpu.sass, *lib.gpu.ptx]
        extra = _sorted(set(found) - set(exp.sass) - set(exp.ptx))
        name = lib.path.rsplit("/", 1)[-1]
        checks.append(
            Check(
                name=f"archs of {name}",
                ok=not extra,
                expected=" ".join([*exp.sass, *exp.ptx]),
                actual=" ".join(found),
                detail=f"{name} has extra {' '.join(extra)}" if extra else _fewer(exp, found),
            )
        )
    return checks


def _fewer(exp: Expectations, found: list[str]) -> str:
    """Why a library with fewer targets than the plan passes: each library only needs a subset
    (torch builds some, e.g. libtorch_cuda_linalg.so, for fewer archs)."""
    missing = _sorted({*exp.sass, *exp.ptx} - set(found))
    if not missing:
        return ""
    return (
        f"no {' '.join(missing)} here: fine, a library may be built for fewer targets than the "
        "build (the build-wide SASS/PTX checks above hold the whole list)"
    )


def _stray_archs(insp: Inspection, exp: Expectations) -> list[Check]:
    """Rare targets of a library (``gpu.extra``: in under half its containers) that the plan
    does not name: a warning, not a failure — official wheels build some kernels for one target
    on purpose (``sm_90a``), but an arch nobody asked for may also be a stray flag."""
    checks = []
    planned = {*exp.sass, *exp.ptx}
    for lib in insp.libraries:
        stray = _sorted(set(lib.gpu.extra) - planned) if lib.gpu else []
        if not stray:
            continue
        name = lib.path.rsplit("/", 1)[-1]
        checks.append(
            Check(
                name=f"extra archs of {name}",
                ok=False,
                severity="warning",
                expected="only planned archs",
                actual=" ".join(stray),
                detail=f"{name} has kernels for {' '.join(stray)}, not in the plan (fine for "
                "single-target kernels such as sm_90a; else check the arch flags)",
            )
        )
    return checks


def _cuda(insp: Inspection, exp: Expectations) -> Check:
    ok = (insp.cuda or None) == exp.cuda
    detail = (
        "" if ok else f"asked for CUDA {exp.cuda or 'none (CPU)'}, torch says {insp.cuda or 'none'}"
    )
    return Check(
        name="CUDA", ok=ok, expected=exp.cuda or "cpu", actual=insp.cuda or "cpu", detail=detail
    )


def _torch(insp: Inspection, exp: Expectations) -> Check:
    found = (insp.torch_version or "").split("+")[0]
    if not exp.torch or not exp.torch[0].isdigit():
        return Check(name="torch version", ok=None, expected=exp.torch or "", actual=found)
    ok = found == exp.torch
    return Check(
        name="torch version",
        ok=ok,
        expected=exp.torch,
        actual=found,
        detail="" if ok else f"asked for torch {exp.torch}, artifact is {insp.torch_version}",
    )


def _feature_actual(insp: Inspection, feature: str) -> bool | None:
    """On/off from the build settings; else only positive evidence (linked library, a -D flag)."""
    setting = _FEATURE_SETTING.get(feature)
    use = insp.config.use
    if setting and setting in use:
        return use[setting]
    if feature in ("cudnn", "nccl"):
        return insp.link(feature).mode != "none"  # type: ignore[arg-type]
    if feature == "distributed" and any(use.get(k) for k in ("USE_GLOO", "USE_NCCL", "USE_MPI")):
        return True
    if setting and f"-D{setting}" in (insp.config.cxx_flags or ""):
        return True
    return None


def _features(insp: Inspection, exp: Expectations) -> list[Check]:
    checks = []
    for feature, wanted in sorted(exp.features.items()):
        if feature not in _FEATURE_SETTING:
            continue
        actual = _feature_actual(insp, feature)
        ok = None if actual is None else actual == wanted
        checks.append(
            Check(
                name=f"feature {feature}",
                ok=ok,
                expected="on" if wanted else "off",
                actual="unknown" if actual is None else ("on" if actual else "off"),
                detail=""
                if ok is not False
                else f"{feature}: asked {'on' if wanted else 'off'}, "
                f"artifact has it {'on' if actual else 'off'}",
            )
        )
    return checks


def _linking(insp: Inspection, exp: Expectations) -> list[Check]:
    checks: list[Check] = []
    if exp.cuda is None:
        return checks
    for lib, wanted in sorted(exp.linking.items()):
        for component in _LINK_COMPONENTS.get(lib, ()):
            link = insp.link(component)  # type: ignore[arg-type]
            ok = link.mode == wanted
            checks.append(
                Check(
                    name=f"linking {component}",
                    ok=ok,
                    expected=wanted,
                    actual=link.mode,
                    detail=""
                    if ok
                    else f"{component}: asked for {wanted}, artifact has "
                    f"{link.mode} ({link.evidence})",
                )
            )
    return checks


def _abi(insp: Inspection, exp: Expectations) -> Check:
    actual = "unknown" if insp.cxx11_abi is None else str(int(insp.cxx11_abi))
    if exp.cxx11_abi is None:
        return Check(name="C++11 ABI", ok=None, expected="release default", actual=actual)
    ok = insp.cxx11_abi == exp.cxx11_abi
    return Check(
        name="C++11 ABI",
        ok=ok,
        expected=str(int(exp.cxx11_abi)),
        actual=actual,
        detail=""
        if ok
        else f"asked for _GLIBCXX_USE_CXX11_ABI={int(exp.cxx11_abi)}, "
        f"artifact has {actual} ({insp.cxx11_abi_evidence})",
    )


def _health(insp: Inspection) -> list[Check]:
    checks = [
        Check(
            name="libraries resolved",
            ok=not insp.missing,
            actual=" ".join(insp.missing) or "all found",
            detail=f"missing {' '.join(insp.missing)}" if insp.missing else "",
        )
    ]
    if insp.wheel is not None and insp.wheel.honest is not None:
        checks.append(
            Check(
                name="manylinux tag",
                ok=insp.wheel.honest,
                severity="warning",  # the plan asks no tag; official 2.6.0 is manylinux1 + 2.17
                expected=f"glibc <= {insp.wheel.glibc_allowed}",
                actual=f"GLIBC_{insp.glibc}",
                detail="; ".join(insp.wheel.problems)
                + ("" if insp.wheel.honest else ": pip would install it where it cannot load"),
            )
        )
    return checks


def _declared(insp: Inspection, exp: Expectations) -> list[Check]:
    if not insp.arch_list or exp.cuda is None:
        return []
    return [_arch_check("compiled-in arch list", "it", [*exp.sass, *exp.ptx], insp.arch_list)]


def compare(insp: Inspection, exp: Expectations) -> list[Check]:
    """Every check of ``insp`` against ``exp``, in a stable order."""
    return [
        _torch(insp, exp),
        _cuda(insp, exp),
        _arch_check("SASS archs", "SASS", exp.sass, insp.sass),
        _arch_check("PTX archs", "PTX", exp.ptx, insp.ptx),
        *_declared(insp, exp),
        *_library_archs(insp, exp),
        *_stray_archs(insp, exp),
        *_features(insp, exp),
        *_linking(insp, exp),
        _abi(insp, exp),
        *_health(insp),
    ]
