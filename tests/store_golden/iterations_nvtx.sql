-- fixture: fixtures/sample_train.nsys.sqlite
-- Iterations of the nsys export, found from the NVTX ranges "step N" (no ProfilerStep there).
SELECT * FROM iteration ORDER BY trace_id, iteration
