-- fixture: fixtures/cuda_graph_captured.json.gz
-- CUDA graph replays, derived on the trace's model (engine/derive/graphs.cpp), and the captured op
-- behind each node. The scenario (scripts/genprof/graph_scenarios.py), checked with python3 on the
-- events: 8 cudaGraphLaunch, each replaying 4 kernels of 20 + 5 + 20 + 8 us (53 us), and the capture
-- recorded one cudaLaunchKernel inside aten::addmm, aten::relu, aten::addmm, aten::_softmax, in that
-- order; so node n of every replay (8 each) is that op, and aten::addmm has the most time.
SELECT g.graph_id, g.id_source, g.replays, g.kernels_per_replay, g.gpu_time_ns, g.span_per_replay_ns, g.captured_ops,
       g.top_captured_op,
       (SELECT group_concat(n, ' ') FROM (SELECT k.node || '=' || o.name || '*' || COUNT(*) AS n FROM graph_kernel k
          JOIN op o ON o.id = k.captured_op_id WHERE k.trace_id = g.trace_id AND k.graph_id = g.graph_id
          GROUP BY k.node ORDER BY k.node)) AS nodes
FROM cuda_graph g ORDER BY g.trace_id, g.graph_id
