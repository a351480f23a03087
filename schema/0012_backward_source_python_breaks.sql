-- proflint fact store, schema version 12: backward ops placed at their forward op's source line;
-- graph breaks with only Python between two compiled regions.
--
-- The autograd engine runs backward ops on its own thread, where no Python frame is recorded, so
-- with_stack/with_modules tell nothing about them. Each backward op carries the autograd sequence
-- number of the forward op that recorded it (Kineto 'Sequence number', with 'Fwd thread id' > 0 on
-- the backward side; emit_nvtx 'seq = N'); derivation gives a backward op without a user frame of
-- its own the place of that forward op: a _source row with origin 'forward_op' and forward_op_id
-- set, its file, line, function and module path those of the forward op. Ops under it (the
-- aten::mm a backward node launches its kernels from) take the same place. Findings word such a
-- place as "backward of aten::addmm at model.py:42 in forward" (docs/derivation.md, "Source and
-- module attribution").
ALTER TABLE _source ADD COLUMN forward_op_id INTEGER; -- op.id of the forward op, for origin 'forward_op'; else NULL

DROP VIEW source;
CREATE VIEW source AS
  SELECT s.trace_id, s.op_id, s.api_call_id, s.range_id, s.origin, f.value AS file, s.line, fn.value AS function,
         CASE WHEN f.value IS NULL THEN NULL ELSE f.value || ':' || s.line || ' in ' || fn.value END AS site,
         m.value AS module_path, st.value AS stack, s.forward_op_id
  FROM _source s
  LEFT JOIN string f ON f.id = s.file_id
  LEFT JOIN string fn ON fn.id = s.function_id
  LEFT JOIN string m ON m.id = s.module_path_id
  LEFT JOIN string st ON st.id = s.stack_id;

-- Why a forward compiled region has graph_break_before = 1: 'eager_ops' when framework ops ran
-- eagerly between it and the previous forward region of the same iteration on the same thread
-- (the break's code touched tensors: a data-dependent shape, an unsupported op), 'python_only' when
-- nothing but Python ran there (a print, a logging call, a Python side effect Dynamo cannot trace):
-- graph_break_before is now 1 in both cases (before schema 12 only in the first). NULL when no break.
ALTER TABLE compiled_region ADD COLUMN graph_break_cause TEXT;
