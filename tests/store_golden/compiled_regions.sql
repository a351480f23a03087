-- fixture: fixtures/compile_graph_break.json.gz
-- torch.compile regions, derived on the trace's model (engine/derive/graphs.cpp). The scenario
-- (scripts/genprof/graph_scenarios.py), checked with python3 on the events: 4 steps; per step region
-- 0/0 launches triton_poi (6 us), an aten::mm GEMM (30 us, the fallback) and triton_red (9 us);
-- aten::nonzero runs eagerly between the regions (a graph break before 1/0); region 1/0 launches
-- triton_per (7 us), triton_tem (25 us) and triton_poi (5 us).
SELECT frame, pass, COUNT(*) AS regions, SUM(graph_break_before) AS breaks, SUM(triton_kernels) AS triton,
       SUM(triton_time_ns) AS triton_ns, SUM(other_kernels) AS other, SUM(other_time_ns) AS other_ns,
       SUM(fallback_ops) AS fallback_ops,
       (SELECT COUNT(*) FROM kernel_compiled c JOIN compiled_region r2 ON r2.range_id = c.region_range_id
         WHERE r2.frame IS r.frame AND r2.pass = r.pass) AS kernels
FROM compiled_region r GROUP BY frame, pass ORDER BY frame, pass
