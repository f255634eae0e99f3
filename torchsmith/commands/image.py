"""`torchsmith image`: a build in a container image — the generated Dockerfile (a build stage
that runs `torchsmith build` inside, with the plan `torchsmith plan --backend docker` shows; an
export stage; training stages), and, unless ``--dockerfile-only``, the chosen engine runs it: the
training images into its store, the pipeline's artifacts into the output directory, each image
as an OCI archive with ``--oci-archive DIR``."""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from rich.markup import escape

from torchsmith import kb as kbmod
from torchsmith.backends import make_executor
from torchsmith.commands.spec_args import add_spec_arguments, cli_values, load_host
from torchsmith.console import out, print_json, shown
from torchsmith.container import inside, routes, sif
from torchsmith.container.build import Build, Pull, engine_choice, oci_archive_argv, run_builds
from torchsmith.container.context import write_context
from torchsmith.container.engines import EngineChoice
from torchsmith.container.images import load_images
from torchsmith.container.planning import ContainerPlan
from torchsmith.errors import HostError, Problem, SpecError
from torchsmith.report.plan_json import plan_json
from torchsmith.spec_sources import ResolvedSpec, resolve_spec
from torchsmith.writable import writable_dir

NOT_PROBED = "not asked (--dockerfile-only: no engine is needed for this)"


def container_spec(args: argparse.Namespace, env: Mapping[str, str]) -> ResolvedSpec:
    """The spec with the container flags; backend ``docker`` unless something else asks for
    another (which the planner then refuses, naming it)."""
    values, problems = cli_values(args)
    if problems:
        raise SpecError(problems)
    rs = resolve_spec(file=args.spec, env=env, cli=values)
    if rs.origin("backend") != "default":
        return rs
    return resolve_spec(file=args.spec, env=env, cli={**values, "backend": "docker"})


def image_plan(args: argparse.Namespace, env: Mapping[str, str]) -> ContainerPlan:
    rs = container_spec(args, env)
    ids = (os.getuid(), os.getgid())
    return routes.for_dockerfile(rs, kbmod.load(), load_images(), load_host(args), ids)


def _print(
    ip: ContainerPlan, choice: EngineChoice | None, dockerfile: Path | None, warnings: bool = True
) -> None:
    out.print(f"[bold]base image[/]: {escape(ip.base.image)} ({escape(ip.base.reason)})")
    if ip.base.recipe is not None:
        out.print(f"[bold]base recipe[/]: {escape(ip.base.recipe.summary())}")
    if choice is not None:
        out.print(f"[bold]engine[/]: {escape(choice.probe.describe())} — {escape(choice.reason)}")
    else:
        out.print(f"[bold]engine[/]: {NOT_PROBED}")
    for image in ip.images:
        spec = image.spec
        ids = f"uid {image.uid} gid {image.gid} ({image.reason})"
        out.print(f"[bold]image {spec.name}[/]: TZ {spec.tz}, user {spec.user}, {escape(ids)}")
    if dockerfile is not None:
        out.print(f"[bold]Dockerfile[/]: {escape(str(dockerfile))}")
    for warning in ip.plan.warnings if warnings else ():
        out.print(f"[yellow]warning:[/] {escape(warning)}")


def _engine_line(line: str) -> None:
    out.print(shown(line))


def _builds(args: argparse.Namespace, ip: ContainerPlan, context: Path) -> list[Build]:
    pull: Pull = args.pull
    builds = [Build(context, f"train-{i.spec.name}", i.spec.name, pull=pull) for i in ip.images]
    if {"wheel", "conda"} & set(ip.outputs) or args.wheels is None:
        dist = Path(ip.plan.output_dir).expanduser().resolve()
        builds.insert(0, Build(context, "export", output_dir=dist, pull=pull))
    return builds


def _export(args: argparse.Namespace, ip: ContainerPlan, choice: EngineChoice, env: Any) -> None:
    folder: Path = args.oci_archive
    folder.mkdir(parents=True, exist_ok=True)
    skopeo = shutil.which("skopeo", path=env.get("PATH"))
    if skopeo is None:
        raise HostError("--oci-archive needs skopeo", "install it (Debian: apt-get install skopeo)")
    with make_executor("local", env) as executor:
        for image in ip.images:
            archive = folder / f"{image.spec.name}.oci.tar"
            archive.unlink(missing_ok=True)
            executor.run(oci_archive_argv(skopeo, choice, image.spec.name, archive), env=env)
            out.print(f"[bold]oci-archive[/]: {escape(str(archive))}")


def _unused_with_dockerfile_only(args: argparse.Namespace) -> list[Problem]:
    """Flags of an engine run given with --dockerfile-only (trial I26: --storage-root was
    ignored without a word): nothing is built, stored or exported."""
    if not args.dockerfile_only:
        return []
    given = {"--sif": args.sif, "--oci-archive": args.oci_archive}
    given["--storage-root"] = args.storage_root
    return [
        Problem(f"{flag} with --dockerfile-only: no image is built", "drop one", flag[2:])
        for flag, value in given.items()
        if value is not None
    ]


def _handle(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    ip = image_plan(args, env)
    choice = None if args.dockerfile_only else engine_choice(ip.engine, env, args.storage_root)
    problems = _unused_with_dockerfile_only(args)
    if args.sif is not None:
        problems += sif.refusals(args.oci_archive, choice.name if choice else None)
    problems += sif.choice_refusals([i.spec.name for i in ip.images], args.sif_image, args.sif)
    if problems:
        raise SpecError(problems)
    context = writable_dir(  # trial I21/I22: -o /proc/ctx or a file was exit 70
        Path(args.context_dir).expanduser().resolve(),
        "-o/--context-dir",
        "give -o a directory you can write (the build context goes there)",
    )
    dockerfile = write_context(ip, load_images().tool("uv"), context, args.wheels)
    if args.json:
        data: dict[str, Any] = {"plan": plan_json(ip.plan), "base_image": ip.base.image}
        data["base_recipe"] = ip.base.recipe.record() if ip.base.recipe else None
        data |= {"dockerfile": str(dockerfile), "engine": choice.name if choice else None}
        print_json(data)
    else:
        _print(ip, choice, dockerfile)
    if choice is None:
        return 0
    log_dir = context / "logs"
    with make_executor("local", env) as executor:
        builds = _builds(args, ip, context)
        run_builds(  # engine output shown(): no markup, no terminal escapes (review N17)
            executor, choice=choice, builds=builds, env=env, log_dir=log_dir, on_line=_engine_line
        )
    if args.oci_archive is not None:
        _export(args, ip, choice, env)
    if args.sif is not None:
        _sifs(args, ip, choice, env)
    return 0


def _sif_builder(
    ex: Any, args: argparse.Namespace, choice: EngineChoice, env: Any, mounts: tuple[Path, ...]
) -> inside.Session:
    """A working container of the builder image, with sid's apptainer installed in it."""
    start = inside.from_argv(choice, args.sif_builder, args.pull)
    done = ex.capture(start, env=env, timeout=1800)
    if done.returncode != 0:
        raise HostError(
            f"buildah cannot start the SIF builder {args.sif_builder}: "
            f"{done.stderr.strip()[-300:]}",
            "name a Debian trixie or sid image with --sif-builder (and check --pull)",
        )
    container = done.stdout.strip().splitlines()[-1]
    proxies = tuple(inside.proxy_env(env).items())
    return inside.Session(inside.buildah_head(choice), container, mounts, proxies, sif.CAPS)


def _sifs(args: argparse.Namespace, ip: ContainerPlan, choice: EngineChoice, env: Any) -> None:
    """Each training image (or those --sif-image names) as NAME.sif, built from its OCI archive
    by apptainer in a working container of the builder image (removed afterwards)."""
    folder = Path(args.sif).expanduser().resolve()
    folder.mkdir(parents=True, exist_ok=True)
    archives, log = Path(args.oci_archive).expanduser().resolve(), folder / "sif-build.log"
    with make_executor("local", env) as ex:
        s = _sif_builder(ex, args, choice, env, (archives, folder))
        try:
            for command in sif.setup_commands():
                ex.run(s.run_argv(command), env=env, log_path=log)
            for name in sif.chosen([i.spec.name for i in ip.images], args.sif_image):
                target, archive = folder / f"{name}.sif", archives / f"{name}.oci.tar"
                ex.run(s.run_argv(sif.build_argv(target, archive)), env=env, log_path=log)
                out.print(f"[bold]sif[/]: {escape(str(target))}")
        finally:
            ex.run(s.remove_argv(), env=env, log_path=log, check=False)


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "image", help="build in a container image: Dockerfile, wheels, training images"
    )
    add_spec_arguments(parser)
    g = parser.add_argument_group("container")
    g.add_argument(
        "-o", "--context-dir", default="image-context", help="where the build context is written"
    )
    g.add_argument(
        "--dockerfile-only",
        action="store_true",
        help="write the build context only (no engine needed)",
    )
    g.add_argument(
        "--wheels", type=Path, metavar="DIR", help="training images from these wheels (no build)"
    )
    g.add_argument("--oci-archive", type=Path, metavar="DIR", help="write NAME.oci.tar per image")
    g.add_argument(
        "--sif",
        type=Path,
        metavar="DIR",
        help="write NAME.sif per image (Apptainer, from the OCI archives; needs --oci-archive)",
    )
    g.add_argument(
        "--sif-image",
        action="append",
        default=[],
        metavar="NAME",
        help="make the SIF of this training image only (repeatable; default: every image)",
    )
    g.add_argument(
        "--sif-builder",
        default=sif.BUILDER,
        metavar="IMAGE",
        help="Debian trixie/sid image apptainer (sid's) runs in (default: %(default)s)",
    )
    g.add_argument("--pull", choices=get_args(Pull), default="missing", help="base image pulls")
    g.add_argument(
        "--storage-root",
        type=Path,
        metavar="DIR",
        help="buildah image store under DIR (overlay, else vfs)",
    )
    g.add_argument("--host-facts", type=Path, help="use recorded `torchsmith host --json`")
    g.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=_handle)
