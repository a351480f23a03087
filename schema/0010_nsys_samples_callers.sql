-- proflint fact store, schema version 10: nsys GPU metrics stored once; who made each OS call.
--
-- GPU_METRICS rows of an Nsight Systems export used to be written twice: as counters (_counter,
-- under the name nsys records) and as sample series (sample_series / sample_point, under canonical
-- names, schema 6). They are now only sample series, format 'nsys-gpu-metrics'; the counter view
-- keeps showing them beside the importer-written counters (Kineto's CUPTI range-profiler metrics),
-- named by the series' metric, so readers of `counter` see the same samples as before.
DROP VIEW counter;
CREATE VIEW counter AS
  SELECT c.trace_id, c.device_id, c.ts_ns, s.value AS name, c.value FROM _counter c JOIN string s ON s.id = c.name_id
  UNION ALL
  SELECT s.trace_id, s.device_id, p.ts_ns, s.metric AS name, p.value
  FROM sample_point p JOIN sample_series s ON s.series_id = p.series_id
  WHERE s.format = 'nsys-gpu-metrics';

-- The code that made an OS runtime call, from its backtrace (nsys OSRT_CALLCHAINS, recorded with
-- `nsys profile --osrt-backtrace-...`): the nearest calling function outside the C runtime
-- libraries (libc, libpthread, the dynamic loader, libstdc++), e.g. '_io_FileIO_readall_impl' for
-- a Python file read or 'arrow::io::ReadableFile::Read' for a native reader. NULL without a backtrace.
ALTER TABLE _os_call ADD COLUMN caller_id INTEGER; -- string id

CREATE VIEW os_call_caller AS
  SELECT o.id, o.trace_id, s.value AS caller FROM _os_call o JOIN string s ON s.id = o.caller_id;
