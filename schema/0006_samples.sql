-- proflint fact store, schema version 6: evidence sampled beside the trace (issue 17).
--
-- Periodic samples of a GPU or a process — nvidia-smi --query-gpu CSV, nvidia-smi dmon/pmon,
-- dcgmi dmon, the PyTorch memory timeline, nsys GPU_METRICS — are series of (time, value) for one
-- device and one metric (docs/samples.md). A sampling log given alone is a trace of its own
-- (trace.format names the log's dialect); given beside a profile of the same job it is attached to
-- that profile's trace and its times are moved onto the trace's clock (sample_series.offset_ns).
-- Importer-filled, except offset_ns which the pipeline sets when it aligns a log with a trace.

-- One series: one metric of one device (and process, for per-process logs) from one file.
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

-- One sample of a series. ts_ns is on the trace's clock (file time + sample_series.offset_ns).
CREATE TABLE sample_point (
  series_id  INTEGER NOT NULL,  -- sample_series.series_id
  ts_ns      INTEGER NOT NULL,
  value      REAL NOT NULL      -- in sample_series.unit
);

-- Samples with their series' description: what rules and detectors read.
CREATE VIEW sample AS
  SELECT s.trace_id, s.device_id, s.pid, s.metric, s.unit, p.ts_ns, p.value, s.series_id, s.source, s.format
  FROM sample_point p JOIN sample_series s ON s.series_id = p.series_id;

-- Operator and module run times read from an operator's own log (Clara-style operator logs: a
-- spec names the total-time key and the module keywords; lines '<text><KEY><text>: <ms>').
-- One row per operator total and per module; a module keyword seen several times is summed.
CREATE TABLE operator_timing (
  trace_id   INTEGER NOT NULL,
  source     TEXT NOT NULL,    -- path of the operator log
  operator   TEXT NOT NULL,    -- operator name (the spec's name, else the log file's stem)
  module     TEXT,             -- module keyword; NULL for the operator's total time
  time_ns    INTEGER NOT NULL, -- summed time of the lines with this keyword
  count      INTEGER NOT NULL, -- lines summed
  first_line INTEGER           -- line of the first occurrence in the log (1-based)
);
