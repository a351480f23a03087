-- proflint fact store: where in the user's Python code each op comes from.
--
-- PyTorch's profiler records the Python side of a step in two ways: with_stack=True writes
-- 'python_function' events around the ops (range.kind = 'python_function', one per Python call,
-- named 'file.py(LINE): function'; with_modules=True adds 'nn.Module: Name_N' events for each
-- module's forward), and older profilers write a 'Call stack' argument on each op (range.call_stack,
-- 'file.py(LINE): function' frames separated by ';'). derive/ reads both (rules in
-- docs/derivation.md, "Source and module attribution") and keeps, per op, the innermost frame of
-- the user's own code and the nn.Module path around it. Frames inside torch, the standard library,
-- site-packages and the other packages of the `[source]` configuration are skipped.
--
-- The LINE is what the profiler recorded: for 'Call stack' frames the line being executed, for
-- 'python_function' events the line the frame was at when the profiler saw it start (for a call
-- made during the capture, usually the first line of the function).

-- Source attribution, derived. One row per op (op_id set) whose enclosing Python frames or call
-- stack are recorded, one per runtime/driver call outside any op (api_call_id set; e.g.
-- torch.cuda.synchronize() calls cudaDeviceSynchronize without an op around it), and one per
-- DataLoader fetch annotation (range_id set; those ranges are not ops). Exactly one of the three is set.
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
);
CREATE INDEX source_op ON _source(op_id);
CREATE INDEX source_api_call ON _source(api_call_id);
CREATE INDEX source_range ON _source(range_id);

-- _source with its texts resolved; `site` is 'file:LINE in function', the form findings print.
CREATE VIEW source AS
  SELECT s.trace_id, s.op_id, s.api_call_id, s.range_id, s.origin, f.value AS file, s.line, fn.value AS function,
         CASE WHEN f.value IS NULL THEN NULL ELSE f.value || ':' || s.line || ' in ' || fn.value END AS site,
         m.value AS module_path, st.value AS stack
  FROM _source s
  LEFT JOIN string f ON f.id = s.file_id
  LEFT JOIN string fn ON fn.id = s.function_id
  LEFT JOIN string m ON m.id = s.module_path_id
  LEFT JOIN string st ON st.id = s.stack_id;
