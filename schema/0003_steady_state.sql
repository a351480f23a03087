-- proflint fact store, schema version 3: start-up versus steady state, and the kind of workload.
--
-- A capture that begins with CUDA context creation, library initialisation or a warm-up
-- iteration must not be judged as if that were how the job runs. derive/ finds the start-up
-- prefix of the analysed window on each active device (rules in docs/derivation.md, "Start-up
-- and steady state") and writes the breakdown of what follows it here, next to the whole-window
-- breakdown (breakdown.iteration = -1). Detectors judge utilization and idle time on this span.

-- Steady state of one device of one trace, derived. One row per device with GPU activity. The
-- nine *_ns columns are the breakdown of [start_ns, end_ns) by the same priority sweep as the
-- breakdown table, so they add up to end_ns - start_ns.
CREATE TABLE steady_state (
  trace_id         INTEGER NOT NULL,
  device_id        INTEGER NOT NULL,
  window_start_ns  INTEGER NOT NULL, -- start of the analysed window (capture, or selected iterations)
  start_ns         INTEGER NOT NULL, -- steady state begins: end of start-up; = window_start_ns when none was found
  end_ns           INTEGER NOT NULL, -- end of the analysed window
  startup_ns       INTEGER NOT NULL, -- start_ns - window_start_ns
  startup_cause    TEXT,             -- comma-separated, in time order: 'context_creation', 'lazy_initialization', 'warmup_range', 'warmup_iteration'; NULL when none
  startup_evidence TEXT,             -- the longest start-up call or range with its duration, e.g. 'cudaFree 981.0 ms'; NULL when none
  kernel_tc_ns     INTEGER NOT NULL, -- Tensor Core kernels
  kernel_other_ns  INTEGER NOT NULL, -- other compute kernels
  communication_ns INTEGER NOT NULL, -- communication kernels not hidden by compute
  memcpy_ns        INTEGER NOT NULL,
  memset_ns        INTEGER NOT NULL,
  runtime_ns       INTEGER NOT NULL, -- host in CUDA/HIP runtime or driver calls, no GPU work
  dataloader_ns    INTEGER NOT NULL, -- host in DataLoader annotations, no GPU work
  cpu_ns           INTEGER NOT NULL, -- host in other ops/annotations, no GPU work
  idle_ns          INTEGER NOT NULL, -- nothing recorded on the GPU or the host
  PRIMARY KEY (trace_id, device_id)
);

-- derived: what the trace runs, from its ops: 'training' (a backward pass or an optimizer step),
-- 'inference' (framework ops without either), 'non_framework' (GPU work, no framework op, no
-- framework named by the trace), NULL when it cannot tell.
ALTER TABLE trace ADD COLUMN workload TEXT;
