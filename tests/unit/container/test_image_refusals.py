"""Issue 28 item 6: `image` refuses a time zone the tz database does not have (trial I05, I07),
two images of one name (I12), user = "root" (I15), a requirement naming the image's own torch or
a companion the spec builds (I14) and engine flags with --dockerfile-only (I26), naming the way
out."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from torchsmith.cli import main
from torchsmith.spec import BuildSpec
from torchsmith.spec_sections import TrainingImage, check_time_zone

# a few names of the IANA tz database (as /usr/share/zoneinfo of this machine lists them)
ZONES = frozenset({"UTC", "Etc/UTC", "Asia/Seoul", "Europe/Berlin", "America/Argentina/Salta"})


@pytest.mark.parametrize("tz", ["UTC", "Asia/Seoul", "America/Argentina/Salta"])
def test_real_zones_pass(tz: str) -> None:
    assert check_time_zone(tz, ZONES) == tz


@pytest.mark.parametrize(
    "tz", ["Mars/Olympus_Mons", "/etc/shadow", "../../etc/shadow", "Asia/Seol", "UTC\nRUN x"]
)
def test_garbage_zones_are_refused(tz: str) -> None:
    with pytest.raises(ValueError, match="is not a time zone of the tz database"):
        check_time_zone(tz, ZONES)


def test_a_misspelt_zone_gets_a_suggestion() -> None:
    with pytest.raises(ValueError, match="did you mean 'Asia/Seoul'"):
        check_time_zone("Asia/Seol", ZONES)


def test_without_a_tz_database_the_form_is_still_checked() -> None:
    assert check_time_zone("Asia/Seoul", frozenset()) == "Asia/Seoul"
    with pytest.raises(ValueError):
        check_time_zone("/etc/shadow", frozenset())


def test_user_root_is_refused_pointing_at_root_true() -> None:
    with pytest.raises(ValidationError, match="set root = true"):
        TrainingImage(name="a", user="root")
    assert TrainingImage(name="a", root=True).root


def test_two_images_of_one_name_are_refused() -> None:
    with pytest.raises(ValidationError, match=r"\['a'\] given twice"):
        BuildSpec.model_validate({"images": [{"name": "a"}, {"name": "b"}, {"name": "a"}]})


@pytest.mark.parametrize("requirement", ["torch==1.0", "Torch>=2", "torch @ https://x/t.whl"])
def test_a_training_image_requirement_naming_torch_is_refused(requirement: str) -> None:
    """Trial I14: 'torch==1.0' clashed with the image's own torch at image build."""
    with pytest.raises(ValidationError, match="name what the image installs from the build's"):
        BuildSpec.model_validate({"images": [{"name": "a", "requirements": [requirement]}]})
    spec = {"images": [{"name": "a", "requirements": ["torchmetrics", "tqdm>=4"]}]}
    assert BuildSpec.model_validate(spec).images[0].requirements == ("torchmetrics", "tqdm>=4")


def test_a_requirement_naming_a_companion_the_spec_builds_is_refused() -> None:
    spec = {"companions": ["torchvision"], "images": [{"name": "a", "requirements": ["tqdm"]}]}
    assert BuildSpec.model_validate(spec).images[0].requirements == ("tqdm",)
    spec["images"] = [{"name": "a", "requirements": ["torchvision==0.1"]}]
    with pytest.raises(ValidationError, match=r"\(torch, torchvision\)"):
        BuildSpec.model_validate(spec)


HOST = Path(__file__).resolve().parents[2] / "fixtures" / "plan" / "host-ci.json"


@pytest.mark.parametrize("flag", ["--storage-root", "--oci-archive"])
def test_engine_flags_with_dockerfile_only_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """Trial I26: --storage-root with --dockerfile-only was ignored without a word."""
    argv = ["image", "--torch", "2.5.1", "--cpu", "--dockerfile-only", "--host-facts", str(HOST)]
    argv += ["-o", str(tmp_path / "ctx"), flag, str(tmp_path / "x")]
    assert main(argv) == 3
    assert f"{flag} with --dockerfile-only: no image is built" in capsys.readouterr().err
    assert not (tmp_path / "ctx").exists()


def test_sif_image_chooses_the_sifs_in_the_specs_order() -> None:
    """Issue 23: --sif-image NAME (repeatable) makes only those SIFs; without it, every one."""
    from torchsmith.container import sif

    assert sif.chosen(["train", "serve"], []) == ["train", "serve"]
    assert sif.chosen(["train", "serve", "eval"], ["eval", "train"]) == ["train", "eval"]
    assert sif.choice_refusals(["train", "serve"], ["serve"], Path("/s")) == []


def test_an_unknown_sif_image_is_refused_naming_the_specs_images() -> None:
    from torchsmith.container import sif

    [problem] = sif.choice_refusals(["train", "serve"], ["trian", "trian"], Path("/s"))
    assert problem.what == "--sif-image 'trian': the spec has no training image of that name"
    assert problem.fix == "did you mean 'train'? name one of the spec's images: train, serve"
    [none] = sif.choice_refusals([], ["x"], Path("/s"))
    assert "none ([[images]] tables of the spec file)" in none.fix


def test_sif_image_without_sif_and_an_unknown_name_are_refused_together(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "images.toml"
    spec.write_text('[[images]]\nname = "train"\n[[images]]\nname = "serve"\n')
    argv = ["image", "--torch", "2.5.1", "--cpu", "--dockerfile-only", "--host-facts", str(HOST)]
    argv += ["--spec", str(spec), "-o", str(tmp_path / "ctx")]
    assert main([*argv, "--sif-image", "serve", "--sif-image", "trian"]) == 3
    err = capsys.readouterr().err
    assert "--sif-image 'trian': the spec has no training image of that name" in err
    assert "did you mean 'train'?" in err and "'serve'" not in err
    assert "--sif-image without --sif: no SIF is made" in err
    assert not (tmp_path / "ctx").exists()
