"""The memory ceiling of a trusted process (``autograder.ceilings``): an allocation past it fails in that process
alone, and a command's ceiling is lifted when it returns."""

from __future__ import annotations

import resource
import subprocess
import sys

from autograder import ceilings

OVER = """
import numpy
from autograder import ceilings
ceilings.impose(512)
small = bytearray(64 << 20)
try:
    numpy.ones(768 << 20, dtype=numpy.uint8)
except MemoryError:
    print("refused")
"""


def test_an_allocation_past_the_ceiling_fails_in_that_process():
    run = subprocess.run([sys.executable, "-c", OVER], capture_output=True, text=True, timeout=60, check=True)
    assert run.stdout.strip() == "refused", run.stderr


def test_a_commands_ceiling_is_lifted_when_it_returns():
    before = resource.getrlimit(resource.RLIMIT_DATA)

    @ceilings.held(ceilings.COMMAND_MB)
    def command() -> tuple[int, int]:
        return resource.getrlimit(resource.RLIMIT_DATA)

    assert command()[0] == ceilings.COMMAND_MB << 20
    assert resource.getrlimit(resource.RLIMIT_DATA) == before
