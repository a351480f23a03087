-- proflint fact store, schema version 13: the iteration selection and the range markers become
-- derived columns.
--
-- Before, `--iter-start/--iter-stop` was recorded only as trace.iter_start/iter_stop and every
-- reader (summary, gate, DLProf reports, the analysis cut) re-applied the range itself; the
-- DataLoader fetch annotations were found by a name pattern in SQL that detectors pasted into
-- their queries. Derivation now decides both once and stores the answer.

-- 1 when the iteration is inside the aggregation range (every iteration when no range was given).
ALTER TABLE iteration ADD COLUMN selected INTEGER NOT NULL DEFAULT 1;

-- What derivation recognised the range as: 'profiler_step' (ProfilerStep#N), 'optimizer'
-- (Optimizer.step#…, Optimizer.zero_grad#…, optimizer.step), 'dataloader' (enumerate(DataLoader)#…
-- __next__, enumerate(DataPipe)#…, and emit_nvtx copies of them); NULL for any other range.
ALTER TABLE _range ADD COLUMN marker TEXT;

-- The few marked ranges, found without a scan of every range (DataLoader fetches: dataloader-stall,
-- gpu-idle-gaps, host-sync and the idle claims look them up per trace; the index only holds rows
-- with a marker, and `marker = ?` implies that).
CREATE INDEX range_by_marker ON _range(marker, trace_id, start_ns) WHERE marker IS NOT NULL;

-- A store saved by an earlier proflint gets both from what it recorded, by the same rules.
UPDATE iteration SET selected = (
  SELECT CASE WHEN (t.iter_start IS NULL OR iteration.iteration >= t.iter_start) AND
                   (t.iter_stop IS NULL OR iteration.iteration <= t.iter_stop) THEN 1 ELSE 0 END
  FROM trace t WHERE t.trace_id = iteration.trace_id);

UPDATE _range SET marker = (
  SELECT CASE
    WHEN s.value GLOB 'ProfilerStep#[0-9]*' AND NOT substr(s.value, 14) GLOB '*[^0-9]*' THEN 'profiler_step'
    WHEN (s.value GLOB 'Optimizer.*' AND instr(s.value, '#') > 0) OR
         (lower(substr(s.value, 1, 14)) = 'optimizer.step' AND (length(s.value) = 14 OR substr(s.value, 15, 1) = '#')) OR
         lower(s.value) = 'optimizer.zero_grad' THEN 'optimizer'
    WHEN instr(s.value, 'enumerate(DataLoader)') > 0 OR instr(s.value, 'enumerate(DataPipe)') > 0 OR
         (instr(s.value, 'DataLoader') > 0 AND instr(s.value, '__next__') > 0) THEN 'dataloader'
  END
  FROM string s WHERE s.id = _range.name_id)
WHERE EXISTS (SELECT 1 FROM trace t WHERE t.trace_id = _range.trace_id AND t.iteration_source IS NOT NULL);

DROP VIEW range;
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
