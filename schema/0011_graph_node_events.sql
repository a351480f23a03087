-- proflint fact store, schema version 11: when and where each CUDA graph node was created.
--
-- Nsight Systems records the creation of every CUDA graph node (CUDA_GRAPH_EVENTS, written with
-- `--cuda-graph-trace=node`): the host call that made it, on which thread and when. During stream
-- capture a node is created by the captured launch itself, so the op around that moment is the op
-- whose work the node replays; instantiating a graph clones its nodes, and the clone (whose id the
-- replayed kernels carry in graphNodeId) names its original in originalGraphNodeId. Derivation
-- follows that chain to attribute a replayed kernel to the op that created its node
-- (graph_kernel.captured_op_id; docs/derivation.md, "CUDA graphs and torch.compile").
-- Importer-filled; no row moves the trace's capture window.

-- One node creation event.
CREATE TABLE _graph_node_event (
  id                     INTEGER PRIMARY KEY,
  trace_id               INTEGER NOT NULL,
  pid                    INTEGER,          -- process
  tid                    INTEGER,          -- OS thread id of the thread that created the node
  start_ns               INTEGER NOT NULL,
  dur_ns                 INTEGER NOT NULL,
  name_id                INTEGER NOT NULL, -- the host call that created it, as recorded (string id)
  event_class            INTEGER,          -- nsys eventClass as recorded
  graph_node_id          INTEGER NOT NULL, -- the node's id (the graphNodeId of kernels it runs)
  original_graph_node_id INTEGER           -- the node it was cloned from (at instantiation), NULL for an original
);
CREATE INDEX graph_node_event_by_node ON _graph_node_event(trace_id, graph_node_id);

CREATE VIEW graph_node_event AS
  SELECT e.id, e.trace_id, e.pid, e.tid, e.start_ns, e.dur_ns, e.start_ns + e.dur_ns AS end_ns, s.value AS name,
         e.event_class, e.graph_node_id, e.original_graph_node_id
  FROM _graph_node_event e JOIN string s ON s.id = e.name_id;
