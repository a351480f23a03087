-- fixture: fixtures/sample_train.json.gz
-- args: --iter-start 2 --iter-stop 3
-- The iteration selection derivation stores (schema 13): iterations 2 and 3 are selected, the
-- others kept but not selected; the range itself stays recorded in trace.iter_start/iter_stop.
SELECT i.iteration, i.name, i.selected, t.iter_start, t.iter_stop FROM iteration i JOIN trace t USING (trace_id)
ORDER BY i.iteration
