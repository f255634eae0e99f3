"""Spec flags shared by `plan` and `build`: the CLI adapter of BuildSpec."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from torchsmith.errors import Problem, SpecError
from torchsmith.host import load as host_load
from torchsmith.host.model import HostFacts
from torchsmith.host.scope import PLANNING, Section
from torchsmith.planner.support import PIPELINE
from torchsmith.proc import HOST
from torchsmith.spec import (
    Backend,
    BaseRecipe,
    CacheKind,
    CompanionSource,
    CompanionWithout,
    Engine,
    Features,
    Linking,
    Output,
    Preset,
    PtxPolicy,
    ToolkitProvider,
)
from torchsmith.spec_sources import ResolvedSpec, feature_switches, is_blank, resolve_spec


def _csv(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(part for part in _parts(values) if part)


def load_host(args: argparse.Namespace, sections: frozenset[Section] = PLANNING) -> HostFacts:
    """The facts a command plans against: ``--host-facts FILE`` (recorded), else a probe here
    of the ``sections`` the plan reads (``host.scope.for_spec(spec)`` where the spec is known:
    ``plan`` and ``build`` of one spec probe the same, so the plan shown is the one built)."""
    recorded = getattr(args, "host_facts", None)
    versions = None if recorded else host_load.versions_file(os.environ)
    return host_load.load_host(recorded, os.environ, Path.cwd(), HOST, versions, sections=sections)


def add_spec_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("build spec (CLI > TORCHSMITH_* env > --spec file > defaults)")
    g.add_argument("--spec", type=Path, help="TOML spec file")
    _add_what(g)
    _add_how(g)
    _add_where(g)


def _add_what(g: argparse._ArgumentGroup) -> None:
    """What to build: torch, its companions, Python, CUDA and GPUs, features, linking."""
    g.add_argument("--torch", help="release (2.5.1), 'main', or a commit")
    g.add_argument(
        "--with",
        dest="companions",
        action="append",
        metavar="LIBS",
        help="torchvision,torchaudio,torchtext[==VER] or auto (repeatable)",
    )
    g.add_argument(
        "--against",
        metavar="WHEEL|python:PATH",
        help="build the --with companions against this torch (a wheel file, or the torch "
        "python:PATH imports) instead of building torch",
    )
    _add_companion_parts(g)
    g.add_argument("--python", help="Python version to build for, e.g. 3.11")
    acc = g.add_mutually_exclusive_group()
    acc.add_argument("--cuda", help="CUDA version, e.g. 12.4")
    acc.add_argument("--cpu", action="store_true", help="CPU-only build")
    g.add_argument(
        "--gpu",
        dest="gpus",
        action="append",
        metavar="TARGET",
        help="GPU name, compute capability (8.6, 8.6+PTX, 9.0a), native or official",
    )
    g.add_argument("--ptx", choices=get_args(PtxPolicy), help="PTX policy")
    g.add_argument("--preset", choices=get_args(Preset))
    g.add_argument(
        "--enable",
        action="append",
        metavar="FEATURE",
        help=f"turn a feature on: {', '.join(Features.model_fields)}",
    )
    g.add_argument("--disable", action="append", metavar="FEATURE", help="turn a feature off")
    g.add_argument(
        "--link",
        action="append",
        metavar="LIB=MODE",
        help="cuda|cudnn|nccl = dynamic|static|pip-deps",
    )
    g.add_argument(
        "--nccl-root",
        metavar="DIR",
        help="prefix of a system NCCL (with --enable system_nccl); a spec file's [nccl] table "
        "also takes include_dir and lib_dir",
    )


def _add_companion_parts(g: argparse._ArgumentGroup) -> None:
    """A companion's own source, and the optional parts left out of its build."""
    g.add_argument(
        "--companion-source",
        dest="companion_source",
        action="append",
        metavar="NAME=SOURCE",
        help="a companion's own source instead of Debian's: torchvision=path:DIR or "
        "torchaudio=tarball:URL_OR_FILE[#sha256=HEX] (repeatable)",
    )
    g.add_argument(
        "--companion-without",
        dest="companion_without",
        action="append",
        metavar="NAME=PARTS",
        help="leave optional parts out of a companion's build: torchaudio=rnnt,rir "
        "(parts: rnnt, rir, align; repeatable)",
    )


# 'container' (the toolkit of a container image) is not a choice: a container build's toolkit is
# its image's, planned by `torchsmith image` / --backend docker (issue 24).
TOOLKITS = tuple(t for t in get_args(ToolkitProvider) if t != "container")


def _toolkit(text: str) -> str:
    if text == "container":
        raise argparse.ArgumentTypeError(
            "'container' is not a toolkit provider of this machine: a container build takes "
            "its image's toolkit — run `torchsmith image` (or `plan --backend docker`) instead"
        )
    if text not in TOOLKITS:
        raise argparse.ArgumentTypeError(f"{text!r}: choose from {', '.join(TOOLKITS)}")
    return text


def _add_how(g: argparse._ArgumentGroup) -> None:
    """How to build it: toolkit, compiler, ABI, source, targets, jobs, compiler cache."""
    g.add_argument(
        "--toolkit",
        type=_toolkit,
        metavar="{" + ",".join(TOOLKITS) + "}",
        help="where nvcc comes from (default auto: this machine's, else a download)",
    )
    g.add_argument("--compiler", help="gcc-11, clang-14, ...")
    abi = g.add_mutually_exclusive_group()
    abi.add_argument("--cxx11-abi", dest="cxx11_abi", action="store_true", default=None)
    abi.add_argument("--no-cxx11-abi", dest="cxx11_abi", action="store_false")
    g.add_argument("--source", help="git | debian | path:DIR | tarball:URL | bundle:FILE")
    g.add_argument("--git-mirror", help="base URL replacing https://github.com/")
    g.add_argument(
        "--in-place",
        action="store_true",
        default=None,
        help="build inside a path: source (modifies it)",
    )
    g.add_argument(
        "--target",
        dest="targets",
        action="append",
        metavar="TARGET",
        help="build only this CMake target (repeatable)",
    )
    g.add_argument("--max-jobs", type=int, help="parallel compile jobs")
    g.add_argument("--cache", choices=get_args(CacheKind))
    g.add_argument("--cache-dir", help="local compiler cache directory (may be shared)")
    g.add_argument(
        "--cache-location",
        help="remote compiler cache: redis://HOST:PORT, http(s)://HOST/PATH (WebDAV), s3://BUCKET",
    )


def _add_where(g: argparse._ArgumentGroup) -> None:
    """What comes out and where the build runs: outputs, backend, container engine and image."""
    g.add_argument(
        "--output",
        dest="outputs",
        action="append",
        choices=get_args(Output),
        help=f"what to produce (carried out today: {', '.join(sorted(PIPELINE.outputs))})",
    )
    g.add_argument("--output-dir")
    g.add_argument(
        "--install-python",
        metavar="PYTHON",
        help="interpreter that --output install installs the wheel into and verifies it in",
    )
    g.add_argument(
        "--backend",
        choices=get_args(Backend),
        help=f"where the build runs (carried out today: {', '.join(sorted(PIPELINE.backends))})",
    )
    g.add_argument("--build-version", help="version baked into the wheel")
    g.add_argument(
        "--sign-key", metavar="KEY.pem", help="Ed25519 key signing each wheel's provenance (DSSE)"
    )
    g.add_argument(
        "--engine", choices=get_args(Engine), help="container engine for --backend docker"
    )
    g.add_argument(
        "--base-image", help="build image for --backend docker instead of the KB's choice"
    )
    g.add_argument(
        "--base-recipe",
        choices=get_args(BaseRecipe),
        help="CUDA base for `image`: auto (NVIDIA's image unless deleted, else a recipe), "
        "image, nvidia (NVIDIA's apt repository), debian (nvidia-cuda-toolkit)",
    )
    g.add_argument(
        "--apt-mirror", metavar="URL", help="package repository the base-image recipe uses"
    )


def _switches(args: argparse.Namespace, problems: list[Problem]) -> dict[str, Any]:
    switches, found = feature_switches(_csv(args.enable) or (), _csv(args.disable) or ())
    values: dict[str, Any] = dict(switches)
    problems += found
    for item in _csv(args.link) or ():
        lib, sep, mode = item.partition("=")
        if not sep or lib not in Linking.model_fields:
            problems.append(Problem(f"--link {item!r} is not LIB=MODE", "e.g. --link nccl=static"))
            continue
        values[f"linking.{lib}"] = mode
    for item in getattr(args, "companion_source", None) or ():
        name, sep, source = item.partition("=")
        if not sep or name.strip() not in CompanionSource.model_fields:
            problems.append(
                Problem(
                    f"--companion-source {item!r} is not NAME=SOURCE",
                    "e.g. --companion-source torchvision=path:~/src/vision "
                    "(NAME: torchvision, torchaudio or torchtext)",
                )
            )
            continue
        values[f"companion_source.{name.strip()}"] = source.strip()
    values.update(_without(args, problems))
    return values


def _without(args: argparse.Namespace, problems: list[Problem]) -> dict[str, tuple[str, ...]]:
    """``--companion-without NAME=PARTS`` (repeatable; the parts of one NAME add up) as
    ``companion_without.NAME`` keys; the parts are checked by the spec model, as the same key
    of a file or variable is."""
    values: dict[str, tuple[str, ...]] = {}
    for item in getattr(args, "companion_without", None) or ():
        name, sep, parts = (text.strip() for text in item.partition("="))
        if not sep or name not in CompanionWithout.model_fields:
            problems.append(
                Problem(
                    f"--companion-without {item!r} is not NAME=PARTS",
                    "e.g. --companion-without torchaudio=rnnt,rir (NAME: torchvision, "
                    "torchaudio or torchtext; PARTS comma-separated)",
                )
            )
            continue
        given = tuple(part.strip() for part in parts.split(","))
        if is_blank(given):
            problems.append(_empty_list_item("--companion-without", [item]))
            continue
        key = f"companion_without.{name}"
        values[key] = (*values.get(key, ()), *given)
    return values


def cli_values(args: argparse.Namespace) -> tuple[dict[str, Any], list[Problem]]:
    problems: list[Problem] = []
    values: dict[str, Any] = {
        "torch": args.torch,
        "companions": _csv(args.companions),
        "against": args.against,
        "python": args.python,
        "accelerator": "cpu" if args.cpu else args.cuda,
        "gpus": _csv(args.gpus),
        "ptx": args.ptx,
        "preset": args.preset,
        "nccl.root": args.nccl_root,
        "toolkit": args.toolkit,
        "compiler": args.compiler,
        "cxx11_abi": args.cxx11_abi,
        "source": args.source,
        "git_mirror": args.git_mirror,
        "in_place": args.in_place,
        "targets": _csv(args.targets),
        "max_jobs": args.max_jobs,
        "cache.kind": args.cache,
        "cache.dir": args.cache_dir,
        "cache.location": args.cache_location,
        "outputs": _csv(args.outputs),
        "output_dir": args.output_dir,
        "install_python": args.install_python,
        "backend": args.backend,
        "build_version": args.build_version,
        "sign_key": args.sign_key,
        "engine": args.engine,
        "base_image": args.base_image,
        "base_recipe": args.base_recipe,
        "apt_mirror": args.apt_mirror,
    }
    values.update(_switches(args, problems))
    problems += _empty_items(args)
    return values, problems


_LIST_FLAGS = {
    "companions": "--with",
    "gpus": "--gpu",
    "targets": "--target",
    "enable": "--enable",
    "disable": "--disable",
    "link": "--link",
}


_TEXT_FLAGS = (
    "torch", "against", "python", "cuda", "nccl_root", "compiler", "source", "git_mirror",
    "cache_dir", "cache_location", "output_dir", "install_python", "build_version", "base_image",
    "sign_key",
)  # fmt: skip


def _empty_items(args: argparse.Namespace) -> list[Problem]:
    """A flag given an empty value (``--torch ''``) or a list flag an empty item (``--target ''``,
    ``--gpu 8.6,``) is refused: dropped, it would turn into the default without a word
    (``--torch ''`` into the newest release, ``--target ''`` into a whole build). The same
    check (:func:`is_blank`) as for ``TORCHSMITH_*`` variables and spec keys, named by flag."""
    problems = [
        _empty_value(dest, value)
        for dest in _TEXT_FLAGS
        if isinstance(value := getattr(args, dest, None), str) and is_blank(value)
    ]
    return problems + [
        _empty_list_item(flag, getattr(args, dest))
        for dest, flag in _LIST_FLAGS.items()
        if is_blank(_parts(getattr(args, dest, None) or []))
    ]


def _parts(values: list[str]) -> list[str]:
    return [part.strip() for value in values for part in value.split(",")]


def _empty_value(dest: str, value: str) -> Problem:
    flag = f"--{dest.replace('_', '-')}"
    return Problem(
        f"{flag} {value!r}: an empty value",
        f"give {flag} a value, or leave {flag} out for its default",
    )


def _empty_list_item(flag: str, values: list[str]) -> Problem:
    given = " ".join(f"{flag} {value!r}" for value in values)
    fix = f"name each item of {flag} (comma-separated or repeated), or leave {flag} out"
    return Problem(f"{given}: an empty item names nothing", fix)


def spec_from_args(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> ResolvedSpec:
    """Merge --spec FILE, TORCHSMITH_* variables and flags (in that rising precedence)."""
    values, problems = cli_values(args)
    if problems:
        raise SpecError(problems)
    return resolve_spec(file=args.spec, env=os.environ if env is None else env, cli=values)
