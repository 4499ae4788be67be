"""A script told to use several cores gets OpenMP threads that wait passively (issue 61): spinning
threads of one script hold the cores their partners need on a busy machine (a HistGB final script
on two threads took 247 s beside other load instead of 14 s), which made runs' Phase 3 and
finalization, and the tests that run them, depend on how busy the machine was."""

from __future__ import annotations

from unittest import mock

from engine.harness import environment
from engine.harness.environment import build_execution_env


def test_several_cores_wait_passively_unless_the_user_said_otherwise() -> None:
    with mock.patch.object(environment, "usable_cores", return_value=4):
        assert build_execution_env(base={"PATH": "/bin"}, cores=2)["OMP_WAIT_POLICY"] == "PASSIVE"
        kept = build_execution_env(base={"PATH": "/bin", "OMP_WAIT_POLICY": "ACTIVE"}, cores=2)
        assert kept["OMP_WAIT_POLICY"] == "ACTIVE"
        assert "OMP_WAIT_POLICY" not in build_execution_env(base={"PATH": "/bin"}, cores=1)
        assert "OMP_WAIT_POLICY" not in build_execution_env(base={"PATH": "/bin"})
    with mock.patch.object(environment, "usable_cores", return_value=1):  # one thread never waits
        assert "OMP_WAIT_POLICY" not in build_execution_env(base={"PATH": "/bin"}, cores=2)
