-- proflint fact store, schema version 4: Tensor Core eligibility counted once.
--
-- A framework op and the ops it calls are often all of an eligible type (aten::conv2d >
-- aten::convolution > aten::_convolution > aten::cudnn_convolution). Since this version,
-- op.tc_eligible is 1 only on the OUTERMOST eligible op of such a sub-tree (its gpu_time_ns is the
-- sub-tree's kernel time); the eligible ops nested inside it carry 0. Summing op.gpu_time_ns over
-- tc_eligible = 1 therefore counts every kernel once, and counting those ops gives the number of
-- eligible ops a person (and DLProf) would name. Kernels find their eligible op through the column below.

-- derived: the eligible op this kernel belongs to (op.id of the outermost Tensor-Core-eligible op
-- enclosing the kernel's op, the op itself included); NULL when the kernel is outside any eligible op
ALTER TABLE _kernel ADD COLUMN tc_eligible_op_id INTEGER;

-- Kernels with their name resolved (see _kernel), now with tc_eligible_op_id.
DROP VIEW kernel;
CREATE VIEW kernel AS
  SELECT k.id, k.trace_id, k.device_id, k.stream_id, k.pid, k.start_ns, k.dur_ns,
         k.start_ns + k.dur_ns AS end_ns, s.value AS name, k.name_id, k.correlation_id, k.external_id,
         k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
         k.registers_per_thread, k.shared_memory_bytes,
         k.api_call_id, k.op_id, k.iteration, k.is_tensor_core, k.category, k.tc_eligible_op_id
  FROM _kernel k JOIN string s ON s.id = k.name_id;
