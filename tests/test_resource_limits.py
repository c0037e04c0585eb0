"""Resource limits (issue 32, point 4): worker counts capped at this machine's CPUs at load,
pools torn down when a unit fails, Ray addresses that do not answer refused quickly."""

from __future__ import annotations

import multiprocessing
import operator
import socket
import time

import numpy as np
import pytest

from neuromark.config import cpu_limit, parse_yaml
from neuromark.context import RunContext
from neuromark.errors import ConfigError
from neuromark.executors import LocalExecutor, Unit
from neuromark.executors.ray_executor import RayExecutor, check_reachable

TOO_MANY = 100_000


def _qubo_yaml(extra: str = "", solver: str = "{name: neuromark-sa}") -> str:
    return f"""task: qubo
benchmark: {{id: t}}
workloads: {{sizes: [10], densities: [0.1], seeds: [0]}}
solvers: [{solver}]
fixed_timeout: {{timeouts: [0.01]}}
{extra}
"""


def test_cpu_limit_is_the_affinity_of_this_process():
    assert 1 <= cpu_limit() <= (multiprocessing.cpu_count() or 1)


def test_jobs_above_the_cpus_is_refused_at_load_naming_key_value_and_limit():
    from neuromark.benchmarks.qubo.task import TASK

    with pytest.raises(ConfigError) as err:
        TASK.plan(parse_yaml(_qubo_yaml(f"jobs: {TOO_MANY}")), RunContext.build())
    text = str(err.value)
    assert "<config>:6" in text and "jobs" in text and str(TOO_MANY) in text
    assert f"{cpu_limit()} CPUs" in text


def test_solver_workers_above_the_cpus_is_refused_at_load():
    pytest.importorskip("numba")
    from neuromark.benchmarks.qubo.task import TASK

    over = cpu_limit() + 1  # under the solvers' own bound (1024): the CPUs decide
    with pytest.raises(ConfigError, match=rf"<config>:4: solvers.0.options.workers: .*{over} "
                                          rf"worker processes exceed this machine's {cpu_limit()} CPUs"):
        TASK.plan(parse_yaml(_qubo_yaml(
            solver=f"{{name: neuromark-sa, options: {{workers: {over}}}}}")), RunContext.build())


def test_jobs_within_the_cpus_is_accepted():
    from neuromark.benchmarks.qubo.config import QuboConfig

    cfg = parse_yaml(_qubo_yaml(f"jobs: {cpu_limit()}"))
    assert QuboConfig.model_validate(cfg.data).jobs == cpu_limit()


def test_local_executor_processes_above_the_cpus_is_refused():
    with pytest.raises(ConfigError, match=rf"processes: {TOO_MANY} exceed .* {cpu_limit()} CPUs"):
        LocalExecutor(processes=TOO_MANY)


def test_corpus_synthesis_jobs_above_the_cpus_is_refused_before_writing(tmp_path):
    from neuromark.benchmarks.keywords.speech_commands import SpeechCommandsEntry

    root = tmp_path / "gsc"
    with pytest.raises(ConfigError, match=rf"synthesize.jobs: {TOO_MANY} worker processes"):
        SpeechCommandsEntry().synthesize(root, jobs=TOO_MANY)
    assert not root.exists()


def test_cochlea_jobs_above_the_cpus_is_refused(tmp_path, capsys):
    from neuromark.cli import main

    (tmp_path / "in").mkdir()
    assert main(["data", "cochlea", str(tmp_path / "in"), str(tmp_path / "out.h5"),
                 "--jobs", str(TOO_MANY)]) == 1
    assert f"--jobs: {TOO_MANY} worker processes exceed" in capsys.readouterr().err
    assert not (tmp_path / "out.h5").exists()
    from neuromark.processors.cochlea.convert import clips_to_spikes

    with pytest.raises(ConfigError, match=r"jobs: 100000 worker processes"):
        clips_to_spikes([np.zeros(160, np.float32)], sample_rate=16000, jobs=TOO_MANY)


def test_a_failing_unit_leaves_no_worker_process_alive():
    if cpu_limit() < 2:
        pytest.skip("needs two CPUs for a pool of two")
    units = [Unit("sleeper", "<test>", time.sleep, (60,)),
             Unit("divides by zero", "<test>", operator.truediv, (1, 0))]
    start = time.perf_counter()
    with pytest.raises(ZeroDivisionError):
        list(LocalExecutor(processes=2).run(units))
    assert time.perf_counter() - start < 45  # the sleeper (60 s) was killed, not waited for
    assert _children_after(30.0) == []


def _children_after(limit_s: float) -> list:
    """Live child processes once they had ``limit_s`` to be reaped (a terminated worker is
    reaped by the pool's own thread too, so the first look may still list it)."""
    deadline = time.monotonic() + limit_s
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return multiprocessing.active_children()


def test_a_pool_closed_early_leaves_no_worker_process_alive():
    if cpu_limit() < 2:
        pytest.skip("needs two CPUs for a pool of two")
    units = [Unit("quick", "<test>", operator.add, (1, 1)),
             Unit("sleeper", "<test>", time.sleep, (60,))]
    outcomes = LocalExecutor(processes=2).run(units)
    assert next(outcomes).value == 2
    outcomes.close()  # e.g. Ctrl-C in the driver
    assert _children_after(30.0) == []


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed on exit: nothing listens there


def test_ray_address_that_does_not_answer_is_refused_quickly():
    address = f"127.0.0.1:{_dead_port()}"
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=rf"--address {address}: no Ray cluster answers"):
        RayExecutor(address=address)  # checked before Ray is imported or initialised
    assert time.perf_counter() - start < 30
    with pytest.raises(ConfigError, match="no Ray cluster answers"):
        check_reachable(f"ray://{address}", timeout_s=1)


@pytest.mark.parametrize("address", ["127.0.0.1", "host:port", "127.0.0.1:0", "127.0.0.1:70000"])
def test_ray_address_that_is_not_host_port_is_refused(address):
    with pytest.raises(ConfigError, match="expected HOST:PORT"):
        check_reachable(address)


def test_ray_address_that_answers_passes_the_check():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        check_reachable(f"127.0.0.1:{server.getsockname()[1]}", timeout_s=2)
