import subprocess

import pytest

from tests.unit.conftest import SubprocessInUnitTest


def test_subprocess_is_forbidden_in_unit_tests() -> None:
    with pytest.raises(SubprocessInUnitTest):
        subprocess.run(["true"], check=False)
