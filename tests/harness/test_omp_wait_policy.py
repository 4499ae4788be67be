"""How the OpenMP threads of a script given several cores wait (docs/decisions/0035): a short spin
before they sleep on free cores (not spinning made every fit several times slower on a quiet
machine), sleeping at once where other work competes for the cores (a spinning thread then waits
for its turn at every barrier: a HistGB script on two threads took 247 s beside other load)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from engine.harness import environment
from engine.harness.environment import (
    OPENMP_SLEEP,
    OPENMP_SPIN,
    OPENMP_WAIT_SETTINGS,
    build_execution_env,
    cpu_pressure_pct,
)

NONE_SET = dict.fromkeys(OPENMP_WAIT_SETTINGS)


def wait_settings(env: dict[str, str]) -> dict[str, str | None]:
    """How the env tells OpenMP threads to wait: each setting's value, None where unset."""
    return {k: env.get(k) for k in OPENMP_WAIT_SETTINGS}


@pytest.mark.parametrize(("contended", "expected"), [(False, OPENMP_SPIN), (True, OPENMP_SLEEP)])
def test_several_cores_wait_as_the_machine_s_load_says_unless_the_user_said_how(
        contended: bool, expected: dict[str, str]) -> None:
    with mock.patch.object(environment, "usable_cores", return_value=4), \
            mock.patch.object(environment, "cores_contended", return_value=contended):
        env = build_execution_env(base={"PATH": "/bin"}, cores=2)
        assert wait_settings(env) == {**NONE_SET, **expected}
        for own in ({"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "0"}):
            kept = build_execution_env(base={"PATH": "/bin", **own}, cores=2)
            assert wait_settings(kept) == {**NONE_SET, **own}
        for fewer in (build_execution_env(base={"PATH": "/bin"}, cores=1), build_execution_env(base={"PATH": "/bin"})):
            assert wait_settings(fewer) == NONE_SET
    with mock.patch.object(environment, "usable_cores", return_value=1):  # one thread never waits
        assert wait_settings(build_execution_env(base={"PATH": "/bin"}, cores=2)) == NONE_SET


def test_contention_is_read_from_the_kernel_s_cpu_pressure_else_the_load_average(tmp_path: Path) -> None:
    pressure = tmp_path / "cpu"
    pressure.write_text("some avg10=31.50 avg60=12.00 avg300=3.00 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    with mock.patch.object(environment, "CPU_PRESSURE", pressure):
        assert cpu_pressure_pct() == 31.5
        assert environment.cores_contended()
        pressure.write_text("some avg10=2.10 avg60=1.00 avg300=0.50 total=9\n")
        assert not environment.cores_contended()
    with mock.patch.object(environment, "CPU_PRESSURE", tmp_path / "absent"), \
            mock.patch.object(environment, "usable_cores", return_value=2):
        assert cpu_pressure_pct() is None
        with mock.patch.object(environment.os, "getloadavg", return_value=(3.5, 1.0, 1.0)):
            assert environment.cores_contended()
        with mock.patch.object(environment.os, "getloadavg", return_value=(1.2, 1.0, 1.0)):
            assert not environment.cores_contended()


def test_the_boosters_openmp_runtime_is_the_one_that_reads_the_spin_setting() -> None:
    """The spin setting only helps if the OpenMP runtime the boosters load is GNU libgomp, which
    reads it: a wheel that moved to another runtime would silently ignore it."""
    probe = ("import json, sklearn.ensemble, lightgbm, threadpoolctl;"
             "print(json.dumps(sorted({i['prefix'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'openmp'})))")
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True)
    assert found.stdout.strip() == '["libgomp"]', found.stdout
