-- fixture: fixtures/legacy_bare_array.json
-- Trace-level facts of a 2021 bare-array Kineto trace (legacy categories): format, vendor,
-- framework, clock, workload and iteration source, and the device it describes.
SELECT t.format, t.vendor, t.framework, t.clock, t.workload, t.iteration_source, t.end_ns - t.start_ns AS window_ns,
       t.event_count, d.device_id, d.name, d.compute_major, d.has_activity
FROM trace t LEFT JOIN device d USING (trace_id) ORDER BY d.device_id
