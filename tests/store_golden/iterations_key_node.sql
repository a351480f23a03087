-- fixture: fixtures/report_mlp.json.gz
-- args: --key-node aten::addmm
-- Iterations marked by a key node (an op name given with --key-node) instead of ProfilerStep:
-- every aten::addmm call starts one; the iteration table and trace.iteration_source show it.
SELECT t.iteration_source, i.iteration, i.name, i.dur_ns, i.source FROM iteration i JOIN trace t USING (trace_id)
ORDER BY i.iteration
