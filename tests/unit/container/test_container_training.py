"""Training images: UID/GID default to the caller's (never 0: root callers get 1000), asked ids
win; the stage runs as the user unless ``root``; seed 000's system layout keeps the wheels."""

from __future__ import annotations

from torchsmith.container.base import choose_base
from torchsmith.container.images import load_images
from torchsmith.container.training import resolve_image, training_stage
from torchsmith.spec import TrainingImage

KB = load_images()
BASE = choose_base(KB, None, None)


def test_ids_default_to_the_callers() -> None:
    image = resolve_image(TrainingImage(name="t"), 1234, 2345)
    assert (image.uid, image.gid, image.reason) == (1234, 2345, "the caller's ids")


def test_a_root_caller_gets_1000_not_0() -> None:
    image = resolve_image(TrainingImage(name="t"), 0, 0)
    assert (image.uid, image.gid) == (1000, 1000) and "root" in image.reason


def test_asked_ids_win() -> None:
    image = resolve_image(TrainingImage(name="t", uid=5, gid=6), 0, 0)
    assert (image.uid, image.gid, image.reason) == (5, 6, "asked")


def test_the_stage_sets_tz_user_workdir_and_installs_the_wheels() -> None:
    spec = TrainingImage(name="t", tz="Europe/Berlin", user="ada", workdir="/w")
    text = "\n".join(training_stage(resolve_image(spec, 1234, 2345), BASE, KB.tool("uv")))
    assert "FROM ${RUNTIME_IMAGE} AS train-t" in text and "ENV TZ=Europe/Berlin" in text
    assert "ARG USER_NAME=ada" in text and "ARG USER_UID=1234" in text
    assert text.endswith("USER ${USER_NAME}\nWORKDIR /w\n") or "USER ${USER_NAME}" in text
    assert "--mount=type=bind,from=export,source=/,target=/wheels" in text


def test_root_images_and_the_system_layout() -> None:
    spec = TrainingImage(name="c", root=True, python_layout="system")
    text = "\n".join(training_stage(resolve_image(spec, 1, 1), BASE, KB.tool("uv")))
    assert "USER ${USER_NAME}" not in text
    assert "python3 -m pip install --no-cache-dir /wheels/*.whl" in text
    assert "COPY --from=export / /opt/wheels/" in text
