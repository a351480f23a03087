-- proflint fact store, schema version 5: the ranks of one distributed job, analysed together.
--
-- derive/ groups the analysed traces into jobs (docs/multi-rank.md, "Which traces form a job"),
-- matches each collective operation across the ranks of a job, estimates every rank's clock
-- offset from the ends of those collectives, and splits each rank's time in a collective into
-- waiting for the last peer and transfer. Importers fill only collective_arg.

-- What the profiler recorded about a collective call on a host range (Kineto's
-- record_param_comms / nccl:* / gloo:* args in newer PyTorch). Importer-filled; one row per range
-- that carried at least one of these arguments.
CREATE TABLE collective_arg (
  range_id        INTEGER PRIMARY KEY, -- range.id of the op that carried the arguments
  trace_id        INTEGER NOT NULL,
  collective_name TEXT,    -- 'Collective name', e.g. 'allreduce', '_allgather_base'
  process_group   TEXT,    -- 'Process Group Name', e.g. '0'
  pg_desc         TEXT,    -- 'Process Group Description', e.g. 'default_pg'
  seq             INTEGER, -- 'Seq': the collective's sequence number in its process group
  in_nelems       INTEGER, -- 'In msg nelems'
  out_nelems      INTEGER, -- 'Out msg nelems'
  dtype           TEXT,    -- 'dtype', e.g. 'Float', 'BFloat16'
  group_size      INTEGER, -- 'Group size'
  group_ranks     TEXT     -- 'Process Group Ranks' as recorded, e.g. '[0, 1]'
);

-- One row per job: the traces (and, for an nsys export with several processes, the processes)
-- that ran together. Every analysed trace belongs to exactly one job (a lone trace = a job of one rank).
CREATE TABLE job (
  job_id         INTEGER PRIMARY KEY,
  source         TEXT NOT NULL,    -- how it was recognised: 'distributed_info', 'nsys_processes', 'given_together', 'single'
  world_size     INTEGER,          -- declared world size when recorded (may exceed ranks_present)
  ranks_present  INTEGER NOT NULL, -- ranks with a trace here
  aligned        INTEGER NOT NULL, -- 1 when clocks were aligned on collectives
  residual_ns    INTEGER,          -- alignment uncertainty: largest per-rank median |residual|; NULL when not aligned
  alignment_note TEXT              -- why not aligned / diagnostic; NULL when fine
);

-- The ranks of a job and where their events are.
CREATE TABLE job_rank (
  job_id          INTEGER NOT NULL,
  rank            INTEGER NOT NULL, -- distributedInfo.rank, else the order the files/processes were given
  trace_id        INTEGER NOT NULL,
  pid             INTEGER,          -- nsys: this rank's process in a multi-process export; NULL otherwise
  device_id       INTEGER,          -- the device this rank drives; NULL when no GPU activity
  clock_offset_ns INTEGER NOT NULL DEFAULT 0, -- add to this rank's timestamps to get job time
  offset_residual_ns INTEGER,       -- median |residual| of this rank's per-instance end differences
  PRIMARY KEY (job_id, rank)
);

-- One collective operation as all ranks performed it (matched across ranks).
CREATE TABLE collective_instance (
  job_id          INTEGER NOT NULL,
  instance_id     INTEGER NOT NULL, -- 0.. in job-time order of last arrival
  process_group   TEXT,             -- process group name when recorded
  seq             INTEGER,          -- sequence number when recorded, else order within (group, type)
  type            TEXT NOT NULL,    -- all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, barrier, send_recv, reduce, unidentified
  bytes           INTEGER,          -- message size when recorded, else NULL
  ranks           INTEGER NOT NULL, -- participants matched
  first_rank      INTEGER NOT NULL, -- arrived first
  last_rank       INTEGER NOT NULL, -- arrived last (the one the others waited for)
  last_arrival_ns INTEGER NOT NULL, -- job clock
  end_ns          INTEGER NOT NULL, -- job clock: median end over participants
  PRIMARY KEY (job_id, instance_id)
);

-- Each rank's part in one collective instance. Times in job clock (rank time + clock_offset_ns).
-- arrival = start of the rank's collective (GPU kernel start when the collective ran a kernel,
-- else the host op start: gloo collectives are CPU ops). wait + transfer = end - start.
CREATE TABLE collective_participation (
  job_id      INTEGER NOT NULL,
  instance_id INTEGER NOT NULL,
  rank        INTEGER NOT NULL,
  trace_id    INTEGER NOT NULL,
  op_id       INTEGER,           -- host op (record_param_comms / c10d:: / gloo op) when present
  kernel_id   INTEGER,           -- GPU kernel when present
  start_ns    INTEGER NOT NULL,  -- job clock (arrival)
  end_ns      INTEGER NOT NULL,  -- job clock
  wait_ns     INTEGER NOT NULL,  -- clamp(last_arrival_ns - start_ns, 0, end_ns - start_ns)
  transfer_ns INTEGER NOT NULL,  -- (end_ns - start_ns) - wait_ns
  iteration   INTEGER,           -- the rank's iteration ordinal containing start (NULL outside iterations)
  PRIMARY KEY (job_id, instance_id, rank)
);

-- Per rank totals (the TraceLens-style straggler table). arrived_last / arrived_first count only
-- instances with at least two participants.
CREATE VIEW collective_rank_summary AS
  SELECT p.job_id, p.rank,
         COUNT(*) AS instances,
         SUM(p.wait_ns) AS total_wait_ns,
         CAST(ROUND(AVG(p.wait_ns)) AS INTEGER) AS mean_wait_ns,
         SUM(CASE WHEN i.last_rank = p.rank AND i.ranks >= 2 THEN 1 ELSE 0 END) AS arrived_last,
         SUM(CASE WHEN i.first_rank = p.rank AND i.ranks >= 2 THEN 1 ELSE 0 END) AS arrived_first,
         SUM(p.end_ns - p.start_ns) AS total_collective_ns,
         SUM(p.transfer_ns) AS total_transfer_ns
  FROM collective_participation p
  JOIN collective_instance i ON i.job_id = p.job_id AND i.instance_id = p.instance_id
  GROUP BY p.job_id, p.rank;
