import subprocess

import pytest

from tests.unit.conftest import SubprocessInUnitTestError


def test_subprocess_is_forbidden_in_unit_tests() -> None:
    with pytest.raises(SubprocessInUnitTestError):
        subprocess.run(["true"], check=False)
