"""Training images (seed 002): several named images from one set of wheels, each with its base,
extra packages and requirements, time zone, a non-root user (UID/GID default: the caller's) and
a working directory. Rendered as ``train-NAME`` stages of the generated Dockerfile."""

from __future__ import annotations

from dataclasses import dataclass

from torchsmith.container.base import BaseChoice
from torchsmith.container.layers import apt_install, comment, python_layer, quote, run_layer
from torchsmith.container.recipe_stage import STAGE, soname_check
from torchsmith.spec import TrainingImage

FALLBACK_ID = 1000
"""The id a training image's user gets when the caller is root (uid 0 is no user to run as)."""


@dataclass(frozen=True)
class ResolvedImage:
    spec: TrainingImage
    uid: int
    gid: int
    reason: str


def resolve_image(spec: TrainingImage, caller_uid: int, caller_gid: int) -> ResolvedImage:
    """UID/GID: asked, else the caller's (files written to a bind mount stay theirs), else 1000
    when the caller is root."""
    if spec.uid is not None and spec.gid is not None:
        return ResolvedImage(spec, spec.uid, spec.gid, "asked")
    uid = spec.uid if spec.uid is not None else caller_uid
    gid = spec.gid if spec.gid is not None else caller_gid
    if uid == 0 or gid == 0:
        return ResolvedImage(
            spec, uid or FALLBACK_ID, gid or FALLBACK_ID, "the caller is root: 1000 instead of 0"
        )
    return ResolvedImage(spec, uid, gid, "the caller's ids")


def _apt(image: ResolvedImage, base: BaseChoice) -> list[str]:
    packages = ["ca-certificates", "tzdata", *image.spec.packages]
    if image.spec.python_layout == "system" or base.python_from == "os":
        packages += ["python3", "python3-venv", "python3-pip"]
    return apt_install(packages)


def _python(image: ResolvedImage, base: BaseChoice, uv_image: str) -> list[str]:
    if image.spec.python_layout == "venv":
        return python_layer(base, uv_image)
    return ["# the image's own Python (dist-packages); the wheels stay under /opt/wheels"]


def _install(image: ResolvedImage) -> list[str]:
    mount = "--mount=type=bind,from=export,source=/,target=/wheels"
    reqs = " ".join(quote(r) for r in image.spec.requirements)
    pip = "python -m pip" if image.spec.python_layout == "venv" else "python3 -m pip"
    command = f"{pip} install --no-cache-dir /wheels/*.whl {reqs}".rstrip()
    lines = ["# hadolint ignore=DL3013", f"RUN {mount} \\\n    {command}"]
    if image.spec.python_layout == "system":
        lines += ["COPY --from=export / /opt/wheels/"]
    return lines


def _user(image: ResolvedImage) -> list[str]:
    spec = image.spec
    lines = [f"ARG USER_NAME={quote(spec.user)}"]
    lines += [f"ARG USER_UID={image.uid}", f"ARG USER_GID={image.gid}"]
    lines += run_layer(
        'groupadd --gid "$USER_GID" "$USER_NAME"',
        'useradd --create-home --uid "$USER_UID" --gid "$USER_GID" --shell /bin/bash "$USER_NAME"',
        f"mkdir -p {quote(spec.workdir)}",
        f'chown "$USER_UID:$USER_GID" {quote(spec.workdir)}',
    )
    return lines


def _origin(image: ResolvedImage, base: BaseChoice) -> str:
    """The image's own base, else the recipe's stage, else the runtime image."""
    if image.spec.base:
        return quote(image.spec.base)
    return STAGE if base.recipe is not None else "${RUNTIME_IMAGE}"


def _check(image: ResolvedImage, base: BaseChoice) -> list[str]:
    """Wheels into a --base-image runtime image: its CUDA runtime measured (the cudart soname)."""
    if base.measured is None or image.spec.base:
        return []
    lines = [comment(f"--base-image: its CUDA runtime measured (the plan's: {base.measured})")]
    return [*lines, *run_layer(*soname_check(base.measured, "the --base-image"))]


def training_stage(
    image: ResolvedImage, base: BaseChoice, uv_image: str, check: bool = False
) -> list[str]:
    """The ``train-NAME`` stage (``check``: a base image's CUDA is measured in it: no build
    stage measured it)."""
    spec = image.spec
    lines = [comment(f"training image {spec.name!r} (user ids: {image.reason})")]
    lines += [f"FROM {_origin(image, base)} AS train-{quote(spec.name)}"]
    lines += ['SHELL ["/bin/bash", "-o", "pipefail", "-c"]', "ARG DEBIAN_FRONTEND=noninteractive"]
    lines += _check(image, base) if check else []
    lines += [f"ENV TZ={quote(spec.tz)}"]
    lines += _apt(image, base)
    lines += run_layer(
        'ln -snf "/usr/share/zoneinfo/$TZ" /etc/localtime', 'echo "$TZ" > /etc/timezone'
    )
    lines += _python(image, base, uv_image) + _install(image) + _user(image)
    if not spec.root:
        lines += ["USER ${USER_NAME}"]
    return [*lines, f"WORKDIR {quote(spec.workdir)}", ""]
