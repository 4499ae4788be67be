"""Driving a campaign: plan it once, create each cell's run, hand every unfinished run to Ray and
record how each attempt ended — all in the campaign's own stream, so the same command after a
crash (of itself, a worker or a node) continues with nothing done twice.

One campaign command at a time holds the campaign's lease; each run's driver holds its run's
lease, so a run whose worker died is resumed by the next attempt (on a live node) from its log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.campaign.plan import CampaignError, CampaignRequest, cell_config, run_id_for, same_plan, started_event
from engine.campaign.ray_driver import drive_run
from engine.campaign.stream import CampaignState, CellState, fold_campaign, stream_id
from engine.run import lifecycle as runs_mod
from engine.run.ray_eval import forwarded_env, ray_address
from events.base import Envelope, NewEvent
from events.campaign import CampaignAttemptFailed, CampaignRunCreated, CampaignRunEnded
from replay.state import fold
from store.base import LeaseHeld, RunExists, RunNotFound

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunnerOptions:
    ray_address: str | None = None
    max_attempts: int = 3
    lease_ttl_s: float = 30.0
    # How long an attempt waits for a dead driver's lease to expire (it expires after the
    # driver's lease TTL, 30 s, when the holder was on another host).
    lease_wait_s: float = 120.0


class CampaignRunner:
    def __init__(self, store: Any, db: Any, name: str, options: RunnerOptions, progress: Progress = lambda _: None):
        self.store, self.db, self.name, self.options, self.progress = store, db, name, options, progress
        self.sid = stream_id(name)
        self.log: list[Envelope] = []
        self.state = CampaignState()
        self._token: str | None = None
        self._ray: Any = None
        self._started_ray = False

    # --- the campaign's stream ----------------------------------------------------------------

    def load(self) -> CampaignState:
        try:
            self.log = list(self.store.read(self.sid)) if self.store.get_run(self.sid) else []
        except RunNotFound:
            self.log = []
        self.state = fold_campaign(self.log)
        return self.state

    def _record(self, *events: Any) -> None:
        appended = self.store.append(self.sid, [NewEvent(event=e, scope="campaign") for e in events],
                                     expected_seq=self.state.last_seq)
        self.log += appended
        self.state = fold_campaign(self.log)
        if self._token is not None:
            self.store.renew_lease(self.sid, self._token, self.options.lease_ttl_s)

    # --- entry --------------------------------------------------------------------------------

    def run(self, request: CampaignRequest | None) -> CampaignState:
        """Continue the campaign (``request`` None: as recorded) until every cell has ended."""
        if request is None and not self.load().planned:
            raise CampaignError(f"no campaign {self.name!r}; start it with `engine campaign start {self.name} "
                                "--tasks … --seeds …`")
        try:
            self.store.create_run(self.sid, strategy="campaign", task=self.name)
        except RunExists:
            pass
        try:
            self._token = self.store.acquire_lease(self.sid, self.options.lease_ttl_s)
        except LeaseHeld as exc:
            raise CampaignError(f"campaign {self.name} is being driven by process {exc.pid} on host {exc.host}; "
                                "wait for it, or stop it (Ctrl-C) and run this command again") from None
        try:
            self.load()
            if self.state.planned and request is not None:
                difference = same_plan(self.state, request)
                if difference:
                    raise CampaignError(f"campaign {self.name} already exists and differs: {difference}. "
                                        "Run it again with the same arguments, or choose a new name")
            if self.state.finished:
                self.progress(f"campaign {self.name}: all {len(self.state.cells)} runs have ended; nothing to start")
                return self.state
            self._connect_ray()
            if not self.state.planned:
                assert request is not None
                self._record(started_event(request, self._gpus_per_run(request)))
                self.progress(f"campaign {self.name}: planned {len(self.state.cells)} runs")
            self._create_runs()
            self._drive_open_cells()
            return self.state
        finally:
            if self._started_ray:
                self._ray.shutdown()
            try:
                self.store.release_lease(self.sid, self._token)
            except Exception:  # the lease expires by itself; never hide the real outcome
                pass

    # --- Ray ----------------------------------------------------------------------------------

    def _connect_ray(self) -> None:
        try:
            import ray
        except ImportError:
            raise CampaignError("campaigns run on Ray, which is not installed: pip install 'mle-engine[cluster]'") \
                from None
        self._ray = ray
        if not ray.is_initialized():
            address = ray_address(self.options.ray_address)
            try:
                ray.init(address=address, include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = "a local Ray instance" if address == "local" else address
                raise CampaignError(f"cannot connect to {where}: {exc}") from None
            self._started_ray = True

    def _gpus_per_run(self, request: CampaignRequest) -> float:
        """``--gpus-per-run`` when given, else one per run where the cluster has GPUs (Ray finds
        them through NVML/CUDA on each node), else none."""
        if request.gpus_per_run is not None:
            return request.gpus_per_run
        return 1.0 if self._ray.cluster_resources().get("GPU", 0) >= 1 else 0.0

    # --- runs ---------------------------------------------------------------------------------

    def _create_runs(self) -> None:
        from engine.agents.select import selection_event

        backends: dict[tuple[str, str], Any] = {}  # (agent, preset) -> AgentSelected
        for cell_state in self.state.open_cells():
            if cell_state.run_id is not None:
                continue
            cell = cell_state.cell
            run_id = run_id_for(self.name, cell)
            if not self._run_exists(run_id):  # else: created before a crash, not yet recorded
                cfg = cell_config(cell, self.state.settings)
                key = (cell.agent, cell.preset)
                if key not in backends:
                    backend = runs_mod.make_backend(cell.agent, cfg, db=self.db)
                    runs_mod.preflight(backend)  # a bad key stops the campaign here, before its runs exist
                    backends[key] = selection_event(backend, cell.agent)
                runs_mod.create_run(self.store, db=self.db, task_spec=cell.task, strategy=cell.strategy,
                                    backend_name=backends[key].chosen, config=cfg, seed=cell.seed, run_id=run_id,
                                    selection=backends[key])
            self._record(CampaignRunCreated(cell=cell.key, run_id=run_id))

    def _run_exists(self, run_id: str) -> bool:
        try:
            self.store.get_run(run_id)
        except RunNotFound:
            return False
        return self.store.last_seq(run_id) > 0

    def _run_outcome(self, run_id: str) -> tuple[str, str]:
        state = fold(self.store.read(run_id))
        return state.status, state.error or ""

    def _drive_open_cells(self) -> None:
        ray = self._ray
        remote = ray.remote(drive_run)
        env = forwarded_env()
        pending: dict[Any, CellState] = {}

        def submit(cell_state: CellState) -> None:
            assert cell_state.run_id is not None
            ref = remote.options(
                num_cpus=self.state.cpus_per_run, num_gpus=self.state.gpus_per_run, max_retries=0,
                scheduling_strategy="SPREAD", runtime_env={"env_vars": env},
                name=f"campaign {self.name}: {cell_state.run_id}",
            ).remote(str(self.db.resolve()), cell_state.run_id, self.options.lease_wait_s)
            pending[ref] = cell_state

        for cell_state in self.state.open_cells():
            status, error = self._run_outcome(cell_state.run_id or "")
            if status in ("completed", "failed"):  # ended before the campaign recorded it
                self._end(cell_state, status, error, cell_state.attempts or 1, "")
            else:
                submit(cell_state)
        self.progress(f"campaign {self.name}: {len(pending)} runs submitted to Ray "
                      f"({self.state.cpus_per_run:g} CPU, {self.state.gpus_per_run:g} GPU each)")
        try:
            while pending:
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=self.options.lease_ttl_s / 3)
                self.store.renew_lease(self.sid, self._token, self.options.lease_ttl_s)
                for ref in ready:
                    cell_state = self.state.cells[pending.pop(ref).cell.key]
                    attempt = cell_state.attempts + 1
                    try:
                        outcome = ray.get(ref)
                    except Exception as exc:  # the worker, its node or the driver failed: try again
                        retry = self._failed(cell_state, attempt, failure_reason(exc))
                        if retry:
                            submit(self.state.cells[cell_state.cell.key])
                        continue
                    if outcome["status"] in ("completed", "failed"):
                        self._end(cell_state, outcome["status"], outcome["error"], attempt, outcome["where"])
                    elif self._failed(cell_state, attempt, f"the driver stopped with the run {outcome['status']}"):
                        submit(self.state.cells[cell_state.cell.key])
        except BaseException:
            for ref in pending:  # Ctrl-C or a store failure: the runs stay resumable
                ray.cancel(ref, force=True)
            raise

    def _failed(self, cell_state: CellState, attempt: int, reason: str) -> bool:
        """Record a failed attempt; whether to try again."""
        assert cell_state.run_id is not None
        self._record(CampaignAttemptFailed(cell=cell_state.cell.key, run_id=cell_state.run_id, attempt=attempt,
                                           reason=reason))
        self.progress(f"  {cell_state.run_id}: attempt {attempt} failed: {reason}")
        if attempt < self.options.max_attempts:
            return True
        self._end(cell_state, "abandoned", f"{attempt} attempts failed; last: {reason}", attempt, "")
        return False

    def _end(self, cell_state: CellState, status: str, reason: str, attempts: int, where: str) -> None:
        assert cell_state.run_id is not None
        self._record(CampaignRunEnded(cell=cell_state.cell.key, run_id=cell_state.run_id, status=status,
                                      attempts=attempts, reason=reason, node=where))
        done = sum(1 for c in self.state.cells.values() if not c.open)
        self.progress(f"  [{done}/{len(self.state.cells)}] {cell_state.run_id}: {status}"
                      + (f" ({reason})" if reason else "") + (f" on {where}" if where else ""))


def address_problem(address: str, timeout_s: float = 5.0) -> str | None:
    """Why ``--ray-address`` cannot be a Ray cluster, found in seconds (Ray itself retries an
    unreachable address for minutes), or None. ``auto`` and ``local`` are left to Ray."""
    import socket

    if address in ("auto", "local"):
        return None
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit() or not host:
        return f"--ray-address {address!r}: expected HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:PORT or auto"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout_s):
            return None
    except OSError as exc:
        return (f"cannot reach a Ray cluster at {address} ({exc.strerror or exc}); start one with "
                "`ray start --head` or check --ray-address")


def failure_reason(exc: BaseException) -> str:
    """One line saying why a Ray task did not return: the node or the worker died, or what the
    driver raised."""
    import ray.exceptions as rex

    if isinstance(exc, rex.NodeDiedError):
        return "the node running it died"
    if isinstance(exc, rex.WorkerCrashedError):
        return "the worker process running it died"
    if isinstance(exc, rex.TaskCancelledError):
        return "the task was cancelled"
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}"[:300]
