-- proflint fact store, schema version 9: CUDA graph replays and torch.compile regions.
--
-- Kernels that a graph launch replays (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch) are
-- attributed to the graph and node they belong to and, when the capture is in the trace, to the op
-- whose launch was captured into that node. Kernels launched inside a torch.compile region are
-- attributed to that region, Triton kernels classified from the name parts Inductor writes.
-- Importers fill only kernel_graph_node; derive/ rebuilds the other tables on every load
-- (rules: docs/derivation.md, "CUDA graphs and torch.compile").

-- Graph and node ids a profiler recorded for a kernel (nsys: graphId / graphNodeId columns of
-- CUPTI_ACTIVITY_KIND_KERNEL; Kineto: 'graph id' / 'graph node id' kernel args where recorded).
-- Importer-filled; one row per kernel that carried a non-zero graph or node id.
CREATE TABLE kernel_graph_node (
  kernel_id     INTEGER PRIMARY KEY, -- kernel.id
  trace_id      INTEGER NOT NULL,
  graph_id      INTEGER,             -- recorded graph id, NULL when the profiler recorded only the node
  graph_node_id INTEGER              -- recorded graph node id, NULL when not recorded
);

-- Derived: one row per kernel replayed by a graph launch.
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

-- Derived: one row per CUDA graph replayed in the trace.
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

-- Derived: one row per torch.compile region: the outermost range on its thread named
-- 'Torch-Compiled Region: F/C', 'CompiledFunction', 'CompiledFunctionBackward' or
-- '## Call CompiledFxGraph <hash> ##' (docs/derivation.md).
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
);

-- Derived: one row per kernel that is an Inductor Triton kernel or was launched inside a compiled region.
CREATE TABLE kernel_compiled (
  kernel_id       INTEGER PRIMARY KEY, -- kernel.id
  trace_id        INTEGER NOT NULL,
  region_range_id INTEGER,             -- compiled_region.range_id, NULL when launched outside every region
  triton_kind     TEXT,                -- from the name Inductor gives: 'pointwise' (triton_poi_), 'reduction' (triton_red_),
                                       -- 'persistent_reduction' (triton_per_), 'template' (triton_tem_), 'foreach'
                                       -- (triton_for_), 'triton' (other triton_ names); NULL for non-Triton kernels
  fallback        INTEGER NOT NULL     -- 1 for a non-Triton kernel inside a region (counted in other_kernels), else 0
);
CREATE INDEX kernel_compiled_by_region ON kernel_compiled(region_range_id);
