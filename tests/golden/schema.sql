-- user_version 14
-- index cpu_sample_by_time
CREATE INDEX cpu_sample_by_time ON _cpu_sample(trace_id, ts_ns);

-- index graph_node_event_by_node
CREATE INDEX graph_node_event_by_node ON _graph_node_event(trace_id, graph_node_id);

-- index kernel_compiled_by_region
CREATE INDEX kernel_compiled_by_region ON kernel_compiled(region_range_id);

-- index os_call_by_thread
CREATE INDEX os_call_by_thread ON _os_call(trace_id, pid, tid, start_ns);

-- index range_by_marker
CREATE INDEX range_by_marker ON _range(marker, trace_id, start_ns) WHERE marker IS NOT NULL;

-- index source_api_call
CREATE INDEX source_api_call ON _source(api_call_id) WHERE api_call_id IS NOT NULL;

-- index source_op
CREATE INDEX source_op ON _source(op_id);

-- index source_range
CREATE INDEX source_range ON _source(range_id) WHERE range_id IS NOT NULL;

-- table _api_call
CREATE TABLE _api_call (
  id             INTEGER PRIMARY KEY,
  trace_id       INTEGER NOT NULL,
  pid            INTEGER,
  tid            INTEGER,
  start_ns       INTEGER NOT NULL,
  dur_ns         INTEGER NOT NULL,
  name_id        INTEGER NOT NULL, -- API name with CUPTI version suffix removed ('cudaLaunchKernel')
  kind           TEXT NOT NULL,    -- 'runtime', 'driver', or 'other' (e.g. MTIA runtime)
  correlation_id INTEGER,          -- shared with the GPU activity it caused (per process)
  external_id    INTEGER,          -- Kineto 'External id' of the enclosing CPU op
  op_id          INTEGER,          -- derived: innermost op (op.id) enclosing the call on its thread
  iteration      INTEGER           -- derived
);

-- table _counter
CREATE TABLE _counter (
  trace_id  INTEGER NOT NULL,
  device_id INTEGER,           -- NULL for host counters
  ts_ns     INTEGER NOT NULL,
  name_id   INTEGER NOT NULL,  -- metric name as recorded
  value     REAL
);

-- table _cpu_frame
CREATE TABLE _cpu_frame (
  sample_id  INTEGER NOT NULL,  -- cpu_sample.id
  trace_id   INTEGER NOT NULL,
  depth      INTEGER NOT NULL,  -- 0 = the function executing when sampled, 1 = its caller, ...
  name_id    INTEGER NOT NULL,  -- function (symbol) name; an unresolved address reads '0x7fd99b3515d4'
  module_id  INTEGER,           -- string id of the library or executable that holds it, when recorded
  PRIMARY KEY (sample_id, depth)
);

-- table _cpu_sample
CREATE TABLE _cpu_sample (
  id        INTEGER PRIMARY KEY,
  trace_id  INTEGER NOT NULL,
  pid       INTEGER,
  tid       INTEGER,           -- the sampled thread
  ts_ns     INTEGER NOT NULL,  -- when the sample was taken
  cpu       INTEGER,           -- CPU core it ran on, when recorded
  leaf_id   INTEGER            -- string id of the innermost frame's function (NULL: no call chain recorded)
);

-- table _graph_node_event
CREATE TABLE _graph_node_event (
  id                     INTEGER PRIMARY KEY,
  trace_id               INTEGER NOT NULL,
  pid                    INTEGER,          -- process
  tid                    INTEGER,          -- OS thread id of the thread that created the node
  start_ns               INTEGER NOT NULL,
  dur_ns                 INTEGER NOT NULL,
  name_id                INTEGER NOT NULL, -- the host call that created it, as recorded (string id)
  event_class            INTEGER,          -- nsys eventClass as recorded
  graph_node_id          INTEGER NOT NULL, -- the node's id (the graphNodeId of kernels it runs)
  original_graph_node_id INTEGER           -- the node it was cloned from (at instantiation), NULL for an original
);

-- table _kernel
CREATE TABLE _kernel (
  id                   INTEGER PRIMARY KEY,
  trace_id             INTEGER NOT NULL,
  device_id            INTEGER,           -- device that ran it
  stream_id            INTEGER,           -- stream it ran on
  pid                  INTEGER,           -- host process that launched it, when known
  start_ns             INTEGER NOT NULL,
  dur_ns               INTEGER NOT NULL,
  name_id              INTEGER NOT NULL,  -- demangled kernel name (string.id)
  correlation_id       INTEGER,           -- links to api_call.correlation_id of the launching call (same pid)
  external_id          INTEGER,           -- Kineto 'External id': links to the CPU op that launched it
  grid_x               INTEGER, grid_y INTEGER, grid_z INTEGER,    -- launch grid
  block_x              INTEGER, block_y INTEGER, block_z INTEGER,  -- block dims
  registers_per_thread INTEGER,
  shared_memory_bytes  INTEGER,           -- static + dynamic shared memory per block
  api_call_id          INTEGER,           -- derived: the launching api_call.id
  op_id                INTEGER,           -- derived: the op it is attributed to (op.id), incl. unassociated:<name> ops
  iteration            INTEGER,           -- derived: iteration.iteration of its launch, NULL outside any
  is_tensor_core       INTEGER,           -- derived: 1 uses Tensor Cores / matrix cores, 0 not
  category             TEXT               -- derived: gemm, conv, attention, elementwise, reduction, communication, memory, other
, tc_eligible_op_id INTEGER);

-- table _memcpy
CREATE TABLE _memcpy (
  id             INTEGER PRIMARY KEY,
  trace_id       INTEGER NOT NULL,
  device_id      INTEGER,
  stream_id      INTEGER,
  pid            INTEGER,
  start_ns       INTEGER NOT NULL,
  dur_ns         INTEGER NOT NULL,
  bytes          INTEGER,          -- bytes copied
  kind           TEXT NOT NULL,    -- 'htod', 'dtoh', 'dtod', 'htoh', 'ptop', 'unknown' (also 'uvm_htod' ...)
  src_kind       TEXT,             -- 'pageable', 'pinned', 'device', 'managed', 'array', 'unknown'
  dst_kind       TEXT,             -- same values as src_kind
  correlation_id INTEGER,
  external_id    INTEGER,
  api_call_id    INTEGER,          -- derived
  op_id          INTEGER,          -- derived
  iteration      INTEGER           -- derived
);

-- table _memset
CREATE TABLE _memset (
  id             INTEGER PRIMARY KEY,
  trace_id       INTEGER NOT NULL,
  device_id      INTEGER,
  stream_id      INTEGER,
  pid            INTEGER,
  start_ns       INTEGER NOT NULL,
  dur_ns         INTEGER NOT NULL,
  bytes          INTEGER,
  mem_kind       TEXT,             -- memory kind written: 'device', 'pinned', 'pageable', 'managed', 'unknown'
  correlation_id INTEGER,
  external_id    INTEGER,
  api_call_id    INTEGER,          -- derived
  op_id          INTEGER,          -- derived
  iteration      INTEGER           -- derived
);

-- table _op
CREATE TABLE _op (
  id              INTEGER PRIMARY KEY,
  trace_id        INTEGER NOT NULL,
  range_id        INTEGER,          -- the source range (NULL for unassociated ops)
  pid             INTEGER,
  tid             INTEGER,
  start_ns        INTEGER,
  dur_ns          INTEGER,
  name_id         INTEGER NOT NULL, -- e.g. 'aten::conv2d', 'unassociated:cudaMemcpyAsync'
  op_type         TEXT,             -- normalized type without namespace/in-place mark, e.g. 'conv2d', 'addmm', 'add'
  pass            TEXT,             -- 'fwd', 'bwd', 'optimizer', 'dataloader' or 'other'
  parent_id       INTEGER,          -- enclosing op (op.id)
  depth           INTEGER,          -- 0 for a top-level op
  path            TEXT,             -- '/ProfilerStep#5/aten::conv2d(3)/aten::convolution' style path
  iteration       INTEGER,          -- iteration.iteration the op started in
  tc_eligible     INTEGER,          -- 1 if the op type and input dtypes could use Tensor Cores
  gpu_time_ns     INTEGER,          -- summed duration of kernels attributed to it (incl. children)
  kernel_count    INTEGER,          -- kernels attributed to it (incl. children)
  tc_time_ns      INTEGER           -- part of gpu_time_ns in Tensor Core kernels
);

-- table _os_call
CREATE TABLE _os_call (
  id             INTEGER PRIMARY KEY,
  trace_id       INTEGER NOT NULL,
  pid            INTEGER,           -- process
  tid            INTEGER,           -- OS thread id of the calling thread
  start_ns       INTEGER NOT NULL,
  dur_ns         INTEGER NOT NULL,  -- time inside the call (blocked or working)
  name_id        INTEGER NOT NULL,  -- function name as recorded ('read', 'pthread_cond_timedwait', 'poll')
  return_value   INTEGER,           -- as recorded (nsys writes 0 for most calls)
  nesting_level  INTEGER            -- 0 for a call made by the program, >0 for one made inside another traced call
, caller_id INTEGER);

-- table _range
CREATE TABLE _range (
  id              INTEGER PRIMARY KEY,
  trace_id        INTEGER NOT NULL,
  pid             INTEGER,
  tid             INTEGER,           -- thread (GPU annotations: the stream id)
  start_ns        INTEGER NOT NULL,
  dur_ns          INTEGER NOT NULL,
  name_id         INTEGER NOT NULL,
  kind            TEXT NOT NULL,     -- 'cpu_op', 'user_annotation', 'gpu_user_annotation', 'python_function', 'nvtx', 'other'
  domain          TEXT,              -- NVTX domain, or the Kineto category for 'other'
  device_id       INTEGER,           -- set for GPU-side annotations
  external_id     INTEGER,           -- Kineto 'External id' (links to runtime calls and kernels)
  sequence_number INTEGER,           -- autograd sequence number (pairs forward and backward ops)
  fwd_thread_id   INTEGER,           -- 'Fwd thread id' of backward ops
  input_dims_id   INTEGER,           -- JSON text of 'Input Dims' (string.id), e.g. [[32,3,224,224],[64,3,7,7]]
  input_types_id  INTEGER,           -- JSON text of 'Input type' (string.id), e.g. ["float","float"]
  call_stack_id   INTEGER,           -- 'Call stack' / Python stack, ';'-separated (string.id)
  module_id       INTEGER,           -- nn.Module hierarchy when recorded (string.id)
  parent_id       INTEGER,           -- derived: enclosing range on the same thread
  depth           INTEGER            -- derived: 0 for top level
, marker TEXT);

-- table _source
CREATE TABLE _source (
  trace_id       INTEGER NOT NULL,
  op_id          INTEGER,           -- op.id, or NULL for a row about an API call
  api_call_id    INTEGER,           -- api_call.id of a call outside any op, else NULL
  range_id       INTEGER,           -- range.id of a DataLoader fetch annotation, else NULL
  origin         TEXT NOT NULL,     -- 'python_function' (with_stack events) or 'call_stack' (op argument)
  file_id        INTEGER,           -- innermost user frame: file as recorded, e.g. 'train.py' (string.id); NULL when every frame was skipped
  line           INTEGER,           -- its line number as recorded
  function_id    INTEGER,           -- its function name, e.g. 'log_metrics' (string.id)
  module_path_id INTEGER,           -- nn.Module path, outermost first, '/'-separated, e.g. 'Net_0/Encoder_0/Linear_2' (string.id); NULL when none recorded
  stack_id       INTEGER            -- all recorded Python frames, innermost first, ';'-separated 'file(LINE): function' (string.id)
, forward_op_id INTEGER);

-- table breakdown
CREATE TABLE breakdown (
  trace_id  INTEGER NOT NULL,
  device_id INTEGER NOT NULL,   -- -1 for traces without GPU activity
  iteration INTEGER NOT NULL,   -- -1 = whole trace
  category  TEXT NOT NULL,      -- 'kernel_tc', 'kernel_other', 'memcpy', 'memset', 'communication', 'runtime', 'dataloader', 'cpu', 'idle'
  time_ns   INTEGER NOT NULL,
  PRIMARY KEY (trace_id, device_id, iteration, category)
);

-- table collective_arg
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

-- table collective_instance
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

-- table collective_participation
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

-- table compiled_region
CREATE TABLE compiled_region (
  range_id           INTEGER PRIMARY KEY, -- range.id
  trace_id           INTEGER NOT NULL,
  name               TEXT NOT NULL,       -- the range's name
  frame              TEXT,                -- Dynamo frame/compile id from 'Torch-Compiled Region: 0/1' ('0/1'), else NULL
  pass               TEXT NOT NULL,       -- 'bwd' for CompiledFunctionBackward, else 'fwd'
  iteration          INTEGER,             -- iteration.iteration it started in, NULL outside any
  start_ns           INTEGER NOT NULL,
  dur_ns             INTEGER NOT NULL,
  triton_kernels     INTEGER NOT NULL,    -- Triton kernels launched inside it
  triton_time_ns     INTEGER NOT NULL,
  other_kernels      INTEGER NOT NULL,    -- non-Triton kernels launched inside it: eager fallbacks and library calls (aten::mm)
  other_time_ns      INTEGER NOT NULL,
  fallback_ops       INTEGER NOT NULL,    -- ops inside it that launched those non-Triton kernels
  graph_break_before INTEGER NOT NULL     -- 1 when framework ops ran eagerly on the same thread between the previous forward
                                          -- region of the same iteration and this one (a graph break), else 0; always 0 for 'bwd'
, graph_break_cause TEXT);

-- table cuda_graph
CREATE TABLE cuda_graph (
  trace_id               INTEGER NOT NULL,
  graph_id               INTEGER NOT NULL, -- recorded graph id; else 1, 2, ... in order of first replay, one per distinct
                                           -- sequence of kernel names a launch replays
  id_source              TEXT NOT NULL,    -- 'recorded' (the profile's id) or 'kernel_sequence' (numbered by proflint)
  device_id              INTEGER,          -- device of its first kernel
  replays                INTEGER NOT NULL, -- graph launches seen
  kernels_per_replay     INTEGER NOT NULL, -- kernels of its first replay
  gpu_time_ns            INTEGER NOT NULL, -- summed duration of all its replayed kernels
  gpu_time_per_replay_ns INTEGER NOT NULL, -- gpu_time_ns / replays
  span_per_replay_ns     INTEGER NOT NULL, -- mean time from a replay's first kernel start to its last kernel end
  capture_start_ns       INTEGER,          -- start of the stream capture (cudaStreamBeginCapture) it came from; NULL when
                                           -- the capture is outside the capture window
  captured_ops           INTEGER,          -- nodes matched to a captured op (NULL when the capture is not in the trace)
  top_captured_op        TEXT,             -- name of the captured op with the most GPU time per replay, NULL when none
  PRIMARY KEY (trace_id, graph_id)
);

-- table device
CREATE TABLE device (
  trace_id      INTEGER NOT NULL,
  device_id     INTEGER NOT NULL,  -- ordinal as used by the events of this trace (CUDA device index)
  name          TEXT,              -- marketing name, e.g. 'Tesla V100-SXM2-32GB' (may be empty on AMD)
  vendor        TEXT,              -- 'nvidia', 'amd', 'mtia', or NULL when unknown
  compute_major INTEGER,           -- compute capability major (7 = Volta/Turing, 8 = Ampere/Ada, 9 = Hopper, 10 = Blackwell)
  compute_minor INTEGER,           -- compute capability minor
  sm_count      INTEGER,           -- streaming multiprocessors (compute units on AMD)
  memory_bytes  INTEGER,           -- total device memory
  has_activity  INTEGER,           -- derived: 1 when any kernel/memcpy/memset ran on it in this trace
  PRIMARY KEY (trace_id, device_id)
);

-- table flow
CREATE TABLE flow (
  trace_id    INTEGER NOT NULL,
  kind        TEXT NOT NULL,      -- 'ac2g', 'fwdbwd', or the original category
  flow_id     INTEGER NOT NULL,   -- id shared by the two ends
  src_pid     INTEGER, src_tid INTEGER, src_ts_ns INTEGER,  -- start end ('s')
  dst_pid     INTEGER, dst_tid INTEGER, dst_ts_ns INTEGER   -- finish end ('f'), NULL when missing
);

-- table graph_kernel
CREATE TABLE graph_kernel (
  kernel_id            INTEGER PRIMARY KEY, -- kernel.id
  trace_id             INTEGER NOT NULL,
  graph_id             INTEGER NOT NULL,    -- cuda_graph.graph_id
  node                 INTEGER NOT NULL,    -- recorded graph node id; else the kernel's position in its replay (start order, from 0)
  replay               INTEGER NOT NULL,    -- ordinal of the replay (graph launch) of this graph in the trace, from 0
  launch_api_call_id   INTEGER,             -- the graph launch call (api_call.id); NULL when it is outside the capture window
  captured_op_id       INTEGER              -- op whose work became this node at capture time (op.id); NULL when the capture is
                                            -- not in the trace or its nodes cannot be matched one to one
);

-- table import_issue
CREATE TABLE import_issue (
  trace_id INTEGER NOT NULL,
  kind     TEXT NOT NULL,    -- e.g. 'event_without_ts', 'unknown_category', 'negative_duration'
  count    INTEGER NOT NULL,
  example  TEXT,             -- one offending value (truncated)
  location TEXT,             -- where: 'byte 1234', 'table CUPTI_ACTIVITY_KIND_KERNEL row 5'
  PRIMARY KEY (trace_id, kind)
);

-- table iteration
CREATE TABLE iteration (
  trace_id     INTEGER NOT NULL,
  iteration    INTEGER NOT NULL, -- 0-based ordinal in time order
  number       INTEGER,          -- step number from the marker (ProfilerStep#N -> N), NULL if none
  name         TEXT,             -- marker name
  start_ns     INTEGER NOT NULL, -- host-side start
  end_ns       INTEGER NOT NULL, -- host-side end
  dur_ns       INTEGER NOT NULL,
  gpu_start_ns INTEGER,          -- first GPU activity launched in the iteration
  gpu_end_ns   INTEGER,          -- last GPU activity launched in the iteration ends
  source       TEXT NOT NULL, selected INTEGER NOT NULL DEFAULT 1,    -- 'profiler_step', 'key_node', 'nvtx', 'auto_period'
  PRIMARY KEY (trace_id, iteration)
);

-- table job
CREATE TABLE job (
  job_id         INTEGER PRIMARY KEY,
  source         TEXT NOT NULL,    -- how it was recognised: 'distributed_info', 'nsys_processes', 'given_together', 'single'
  world_size     INTEGER,          -- declared world size when recorded (may exceed ranks_present)
  ranks_present  INTEGER NOT NULL, -- ranks with a trace here
  aligned        INTEGER NOT NULL, -- 1 when clocks were aligned on collectives
  residual_ns    INTEGER,          -- alignment uncertainty: largest per-rank median |residual|; NULL when not aligned
  alignment_note TEXT              -- why not aligned / diagnostic; NULL when fine
);

-- table job_rank
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

-- table kernel_compiled
CREATE TABLE kernel_compiled (
  kernel_id       INTEGER PRIMARY KEY, -- kernel.id
  trace_id        INTEGER NOT NULL,
  region_range_id INTEGER,             -- compiled_region.range_id, NULL when launched outside every region
  triton_kind     TEXT,                -- from the name Inductor gives: 'pointwise' (triton_poi_), 'reduction' (triton_red_),
                                       -- 'persistent_reduction' (triton_per_), 'template' (triton_tem_), 'foreach'
                                       -- (triton_for_), 'triton' (other triton_ names); NULL for non-Triton kernels
  fallback        INTEGER NOT NULL     -- 1 for a non-Triton kernel inside a region (counted in other_kernels), else 0
);

-- table kernel_graph_node
CREATE TABLE kernel_graph_node (
  kernel_id     INTEGER PRIMARY KEY, -- kernel.id
  trace_id      INTEGER NOT NULL,
  graph_id      INTEGER,             -- recorded graph id, NULL when the profiler recorded only the node
  graph_node_id INTEGER              -- recorded graph node id, NULL when not recorded
);

-- table memory_sample
CREATE TABLE memory_sample (
  trace_id        INTEGER NOT NULL,
  device_id       INTEGER NOT NULL,
  ts_ns           INTEGER NOT NULL,
  allocated_bytes INTEGER,  -- total allocated after this event
  reserved_bytes  INTEGER,  -- total reserved by the caching allocator after this event, NULL if unknown
  delta_bytes     INTEGER   -- bytes allocated (positive) or freed (negative) by this event
);

-- table operator_timing
CREATE TABLE operator_timing (
  trace_id   INTEGER NOT NULL,
  source     TEXT NOT NULL,    -- path of the operator log
  operator   TEXT NOT NULL,    -- operator name (the spec's name, else the log file's stem)
  module     TEXT,             -- module keyword; NULL for the operator's total time
  time_ns    INTEGER NOT NULL, -- summed time of the lines with this keyword
  count      INTEGER NOT NULL, -- lines summed
  first_line INTEGER           -- line of the first occurrence in the log (1-based)
);

-- table process
CREATE TABLE process (
  trace_id INTEGER NOT NULL,
  pid      INTEGER NOT NULL,  -- OS process id (nsys: globalPid decoded to the pid)
  name     TEXT,              -- process name when recorded
  PRIMARY KEY (trace_id, pid)
);

-- table sample_point
CREATE TABLE sample_point (
  series_id  INTEGER NOT NULL,  -- sample_series.series_id
  ts_ns      INTEGER NOT NULL,
  value      REAL NOT NULL      -- in sample_series.unit
);

-- table sample_series
CREATE TABLE sample_series (
  series_id  INTEGER PRIMARY KEY,
  trace_id   INTEGER NOT NULL,
  device_id  INTEGER,          -- GPU index as the log numbers it (nvidia-smi index, dmon gpu, DCGM GPU id); NULL: not per GPU
  pid        INTEGER,          -- process of a per-process series (nvidia-smi pmon); NULL otherwise
  metric     TEXT NOT NULL,    -- canonical name (docs/samples.md: gpu_active, memory_used, power_draw, ...) or the name as recorded
  unit       TEXT NOT NULL,    -- unit of value: '%', 'bytes', 'W', 'C', 'MHz', 'bytes/s', or the unit as recorded ('' = none)
  source     TEXT NOT NULL,    -- path of the file the samples came from
  format     TEXT NOT NULL,    -- 'nvidia-smi-csv', 'nvidia-smi-dmon', 'nvidia-smi-pmon', 'dcgmi-dmon', 'torch-memory-timeline', 'nsys-gpu-metrics'
  offset_ns  INTEGER NOT NULL DEFAULT 0  -- added to the file's own times to put them on the trace's clock
);

-- table steady_state
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

-- table stream
CREATE TABLE stream (
  trace_id  INTEGER NOT NULL,
  device_id INTEGER NOT NULL,
  stream_id INTEGER NOT NULL,  -- CUDA/HIP stream id as recorded
  name      TEXT,              -- stream name when recorded (NVTX naming or Kineto thread_name)
  PRIMARY KEY (trace_id, device_id, stream_id)
);

-- table string
CREATE TABLE string (
  id    INTEGER PRIMARY KEY,  -- referenced by every *_id text column below
  value TEXT NOT NULL         -- the text, stored once
);

-- table sync_event
CREATE TABLE sync_event (
  id             INTEGER PRIMARY KEY,
  trace_id       INTEGER NOT NULL,
  pid            INTEGER,
  tid            INTEGER,
  device_id      INTEGER,
  stream_id      INTEGER,
  start_ns       INTEGER NOT NULL,
  dur_ns         INTEGER NOT NULL,
  kind           TEXT NOT NULL,  -- 'event_sync', 'stream_sync', 'context_sync', 'stream_wait_event', 'unknown'
  correlation_id INTEGER,
  iteration      INTEGER         -- derived
);

-- table thread
CREATE TABLE thread (
  trace_id INTEGER NOT NULL,
  pid      INTEGER NOT NULL,  -- owning process
  tid      INTEGER NOT NULL,  -- OS thread id
  name     TEXT,              -- thread name when recorded
  PRIMARY KEY (trace_id, pid, tid)
);

-- table trace
CREATE TABLE trace (
  trace_id        INTEGER PRIMARY KEY, -- key used by every other table
  path            TEXT NOT NULL,       -- the file as given on the command line
  format          TEXT NOT NULL,       -- 'kineto' or 'nsys'
  format_version  TEXT,                -- Kineto schemaVersion / nsys EXPORT_SCHEMA_VERSION
  tool_version    TEXT,                -- nsys product version, or Kineto/CUPTI version when recorded
  framework       TEXT,                -- 'pytorch' when the trace says so, else NULL
  vendor          TEXT,                -- 'nvidia', 'amd', 'mtia' or NULL: from runtime/kernel names and devices
  rank            INTEGER,             -- distributed rank (distributedInfo.rank), NULL when unknown
  world_size      INTEGER,             -- distributed world size, NULL when unknown
  comm_backend    TEXT,                -- 'nccl', 'gloo', ... when recorded
  host_name       TEXT,                -- host the trace was captured on, when recorded (never printed in reports)
  clock           TEXT,                -- 'epoch' (Unix ns), 'monotonic' or 'session' (nsys session clock)
  start_ns        INTEGER,             -- first timestamp of any imported event (capture window start)
  end_ns          INTEGER,             -- last end timestamp of any imported event (capture window end)
  event_count     INTEGER NOT NULL DEFAULT 0, -- events/rows read from the file, kept or not
  file_bytes      INTEGER,             -- size of the input file on disk
  iteration_source TEXT                -- derived: how iterations were found ('profiler_step', 'key_node', 'nvtx', 'auto_period', 'none')
, iter_start INTEGER, iter_stop INTEGER, workload TEXT);

-- view api_call
CREATE VIEW api_call AS
  SELECT a.id, a.trace_id, a.pid, a.tid, a.start_ns, a.dur_ns, a.start_ns + a.dur_ns AS end_ns,
         s.value AS name, a.name_id, a.kind, a.correlation_id, a.external_id, a.op_id, a.iteration
  FROM _api_call a JOIN string s ON s.id = a.name_id;

-- view collective_rank_summary
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

-- view counter
CREATE VIEW counter AS
  SELECT c.trace_id, c.device_id, c.ts_ns, s.value AS name, c.value FROM _counter c JOIN string s ON s.id = c.name_id
  UNION ALL
  SELECT s.trace_id, s.device_id, p.ts_ns, s.metric AS name, p.value
  FROM sample_point p JOIN sample_series s ON s.series_id = p.series_id
  WHERE s.format = 'nsys-gpu-metrics';

-- view cpu_frame
CREATE VIEW cpu_frame AS
  SELECT f.sample_id, f.trace_id, f.depth, s.value AS name, f.name_id, m.value AS module
  FROM _cpu_frame f JOIN string s ON s.id = f.name_id LEFT JOIN string m ON m.id = f.module_id;

-- view cpu_sample
CREATE VIEW cpu_sample AS
  SELECT c.id, c.trace_id, c.pid, c.tid, c.ts_ns, c.cpu, s.value AS leaf, c.leaf_id
  FROM _cpu_sample c LEFT JOIN string s ON s.id = c.leaf_id;

-- view graph_node_event
CREATE VIEW graph_node_event AS
  SELECT e.id, e.trace_id, e.pid, e.tid, e.start_ns, e.dur_ns, e.start_ns + e.dur_ns AS end_ns, s.value AS name,
         e.event_class, e.graph_node_id, e.original_graph_node_id
  FROM _graph_node_event e JOIN string s ON s.id = e.name_id;

-- view kernel
CREATE VIEW kernel AS
  SELECT k.id, k.trace_id, k.device_id, k.stream_id, k.pid, k.start_ns, k.dur_ns,
         k.start_ns + k.dur_ns AS end_ns, s.value AS name, k.name_id, k.correlation_id, k.external_id,
         k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
         k.registers_per_thread, k.shared_memory_bytes,
         k.api_call_id, k.op_id, k.iteration, k.is_tensor_core, k.category, k.tc_eligible_op_id
  FROM _kernel k JOIN string s ON s.id = k.name_id;

-- view memcpy
CREATE VIEW memcpy AS
  SELECT m.*, m.start_ns + m.dur_ns AS end_ns FROM _memcpy m;

-- view memset
CREATE VIEW memset AS
  SELECT m.*, m.start_ns + m.dur_ns AS end_ns FROM _memset m;

-- view op
CREATE VIEW op AS
  SELECT o.id, o.trace_id, o.range_id, o.pid, o.tid, o.start_ns, o.dur_ns, o.start_ns + o.dur_ns AS end_ns,
         s.value AS name, o.name_id, o.op_type, o.pass, o.parent_id, o.depth, o.path, o.iteration,
         o.tc_eligible, o.gpu_time_ns, o.kernel_count, o.tc_time_ns,
         d.value AS input_dims, t.value AS input_types, c.value AS call_stack, m.value AS module
  FROM _op o JOIN string s ON s.id = o.name_id
  LEFT JOIN _range r ON r.id = o.range_id
  LEFT JOIN string d ON d.id = r.input_dims_id
  LEFT JOIN string t ON t.id = r.input_types_id
  LEFT JOIN string c ON c.id = r.call_stack_id
  LEFT JOIN string m ON m.id = r.module_id;

-- view os_call
CREATE VIEW os_call AS
  SELECT o.id, o.trace_id, o.pid, o.tid, o.start_ns, o.dur_ns, o.start_ns + o.dur_ns AS end_ns,
         s.value AS name, o.name_id,
         CASE
           WHEN s.value IN ('read', 'pread', 'pread64', 'readv', 'preadv', 'preadv2', 'fread', 'fread_unlocked',
                            'fgets', 'getline', 'getdelim', 'write', 'pwrite', 'pwrite64', 'writev', 'pwritev',
                            'fwrite', 'fwrite_unlocked', 'fputs', 'fflush', 'recv', 'recvfrom', 'recvmsg',
                            'recvmmsg', 'send', 'sendto', 'sendmsg', 'sendmmsg', 'sendfile', 'sendfile64',
                            'accept', 'accept4', 'connect', 'open', 'open64', 'openat', 'openat64', 'creat',
                            'fopen', 'fopen64', 'fdopen', 'freopen', 'close', 'fclose', 'stat', 'stat64',
                            'lstat', 'lstat64', 'fstat', 'fstat64', 'fstatat', 'statx', 'access', 'fsync',
                            'fdatasync', 'sync', 'syncfs', 'lseek', 'lseek64', 'ftruncate', 'truncate',
                            'getdents', 'getdents64', 'readdir', 'readdir64', 'opendir', 'closedir', 'unlink',
                            'rename', 'mkdir', 'rmdir', 'copy_file_range', 'splice', 'posix_fadvise') THEN 'io'
           WHEN s.value IN ('poll', 'ppoll', 'select', 'pselect', 'pselect6', 'epoll_wait', 'epoll_pwait',
                            'epoll_pwait2', 'futex', 'pthread_cond_wait', 'pthread_cond_timedwait',
                            'pthread_mutex_lock', 'pthread_mutex_timedlock', 'pthread_rwlock_rdlock',
                            'pthread_rwlock_wrlock', 'pthread_rwlock_timedrdlock', 'pthread_rwlock_timedwrlock',
                            'pthread_spin_lock', 'pthread_barrier_wait', 'pthread_join', 'pthread_timedjoin_np',
                            'sem_wait', 'sem_timedwait', 'sem_clockwait', 'wait', 'waitpid', 'waitid', 'wait3',
                            'wait4', 'sigwait', 'sigwaitinfo', 'sigtimedwait', 'sigsuspend', 'pause', 'msgrcv',
                            'semop', 'semtimedop', 'mq_receive', 'mq_timedreceive', 'flock', 'lockf') THEN 'wait'
           WHEN s.value IN ('sleep', 'usleep', 'nanosleep', 'clock_nanosleep') THEN 'sleep'
           WHEN s.value = 'ioctl' THEN 'driver'
           WHEN s.value IN ('mmap', 'mmap64', 'munmap', 'mremap', 'brk', 'sbrk', 'madvise', 'mprotect',
                            'mlock', 'munlock', 'shm_open', 'shm_unlink') THEN 'memory'
           WHEN s.value IN ('fork', 'vfork', 'clone', 'execve', 'execv', 'execvp', 'execvpe', 'execl', 'execlp',
                            'execle', 'pthread_create', 'system', 'posix_spawn', 'posix_spawnp', 'popen',
                            'pclose') THEN 'process'
           ELSE 'other'
         END AS category,
         o.return_value, o.nesting_level
  FROM _os_call o JOIN string s ON s.id = o.name_id;

-- view os_call_caller
CREATE VIEW os_call_caller AS
  SELECT o.id, o.trace_id, s.value AS caller FROM _os_call o JOIN string s ON s.id = o.caller_id;

-- view range
CREATE VIEW range AS
  SELECT r.id, r.trace_id, r.pid, r.tid, r.start_ns, r.dur_ns, r.start_ns + r.dur_ns AS end_ns,
         s.value AS name, r.name_id, r.kind, r.domain, r.device_id, r.external_id, r.sequence_number,
         r.fwd_thread_id, d.value AS input_dims, t.value AS input_types, c.value AS call_stack,
         m.value AS module, r.parent_id, r.depth, r.marker
  FROM _range r JOIN string s ON s.id = r.name_id
  LEFT JOIN string d ON d.id = r.input_dims_id
  LEFT JOIN string t ON t.id = r.input_types_id
  LEFT JOIN string c ON c.id = r.call_stack_id
  LEFT JOIN string m ON m.id = r.module_id;

-- view sample
CREATE VIEW sample AS
  SELECT s.trace_id, s.device_id, s.pid, s.metric, s.unit, p.ts_ns, p.value, s.series_id, s.source, s.format
  FROM sample_point p JOIN sample_series s ON s.series_id = p.series_id;

-- view source
CREATE VIEW source AS
  SELECT s.trace_id, s.op_id, s.api_call_id, s.range_id, s.origin, f.value AS file, s.line, fn.value AS function,
         CASE WHEN f.value IS NULL THEN NULL ELSE f.value || ':' || s.line || ' in ' || fn.value END AS site,
         m.value AS module_path, st.value AS stack, s.forward_op_id
  FROM _source s
  LEFT JOIN string f ON f.id = s.file_id
  LEFT JOIN string fn ON fn.id = s.function_id
  LEFT JOIN string m ON m.id = s.module_path_id
  LEFT JOIN string st ON st.id = s.stack_id;

