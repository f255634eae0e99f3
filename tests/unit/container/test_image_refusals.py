"""Issue 28 item 6: `image` refuses a time zone the tz database does not have (trial I05, I07),
two images of one name (I12) and user = "root" (I15), naming the way out."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

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
