-- rules/op_type_gpu_budget.lua — op-type-gpu-budget
--
-- What: one op type that does no matrix math (mul, add, copy, softmax, layer_norm ...) takes a
-- large share of the GPU time that the model's GEMMs, convolutions and attention take.
-- Why: in a healthy DL model the matrix math dominates GPU time. A memory-bound op type that
-- costs a large fraction of it points at unfused elementwise chains, needless copies or dtype
-- conversions — the work torch.compile (or a fused kernel) removes.
return {
  id = "op-type-gpu-budget",
  title = "An op type without matrix math takes a large share of the GEMM/conv GPU time",
  doc = [[
Sums kernel time by the op type of the op that launched each kernel (communication kernels
excluded), and compares each op type whose kernels are mostly not GEMM/conv/attention with the
total GEMM/conv/attention kernel time. Reports the op types above `max_ratio` of it. The
estimate is the op type's kernel time x `fusion_gain`, scaled by the GPU's busy/kernel time.]],
  needs = { "kernels", "ops" },
  options = {
    max_ratio = { default = 0.35, doc = "report an op type above this fraction of the GEMM/conv/attention time" },
    fusion_gain = { default = 0.5, doc = "share of the op type's time that fusing it away saves" },
    min_wall_share = { default = 0.01, doc = "report only when the estimate is at least this share of wall time" },
    ignore = { default = { "unassociated" }, doc = "op types never reported" },
  },

  evaluate = function(ctx)
    local o = ctx.options
    local ignore = {}
    for _, t in ipairs(o.ignore) do ignore[t] = true end
    for _, dev in ipairs(ctx.summary.devices) do
      local matmul_ns, rows = 0, {}
      -- Base tables, grouped on integer keys first; names are joined on the few groups only.
      for row in ctx:rows([[
          SELECT coalesce(g.op_type, s.value) AS op_type, sum(g.ns) AS ns, sum(g.kernels) AS kernels,
                 sum(g.matmul_ns) AS matmul_ns, min(g.first) AS first, max(g.last) AS last
          FROM (SELECT o.op_type AS op_type, o.name_id AS name_id, sum(k.dur_ns) AS ns, count(*) AS kernels,
                       sum(CASE WHEN k.category IN ('gemm', 'conv', 'attention') THEN k.dur_ns ELSE 0 END) AS matmul_ns,
                       min(k.iteration) AS first, max(k.iteration) AS last
                FROM _kernel k JOIN _op o ON o.id = k.op_id
                WHERE k.trace_id = ? AND k.device_id IS ? AND k.category <> 'communication'
                GROUP BY o.op_type, o.name_id) g
          JOIN string s ON s.id = g.name_id
          GROUP BY 1 ORDER BY ns DESC]], ctx.trace_id, dev.device_id) do
        matmul_ns = matmul_ns + row.matmul_ns
        rows[#rows + 1] = row
      end
      local busy_scale = dev.kernel_time_ns > 0 and dev.kernel_busy_ns / dev.kernel_time_ns or 0
      for _, row in ipairs(rows) do
        local ratio = matmul_ns > 0 and row.ns / matmul_ns or 0
        local savings = math.floor(row.ns * o.fusion_gain * busy_scale)
        if matmul_ns > 0 and not ignore[row.op_type] and row.matmul_ns < 0.5 * row.ns and ratio > o.max_ratio
            and savings >= o.min_wall_share * (ctx.summary.steady_wall_ns or ctx.summary.wall_ns) then
          -- A ratio, not a share: an op type can take more time than all matrix math together,
          -- and "154.3% of the GEMM time" read as a broken percentage. Above 1 it is said as a multiple.
          local compared = ratio > 1
            and string.format("%.2fx the %s", ratio, proflint.format_ns(matmul_ns))
            or string.format("%s of the %s", proflint.format_percent(ratio), proflint.format_ns(matmul_ns))
          ctx:report{
            problem = string.format(
              "On GPU %d, op type '%s' took %s of kernel time (%d kernels), %s spent in GEMM, " ..
              "convolution and attention kernels (budget: %s of it).",
              dev.device_id, row.op_type, proflint.format_ns(row.ns), row.kernels, compared,
              proflint.format_percent(o.max_ratio)),
            recommendation = string.format(
              "Find where '%s' runs (proflint query ... \"SELECT path, gpu_time_ns FROM op WHERE op_type = '%s' " ..
              "ORDER BY gpu_time_ns DESC LIMIT 20\") and remove or fuse it: compile the model with " ..
              "torch.compile(model) so chains of elementwise ops become one kernel, use fused implementations " ..
              "(F.scaled_dot_product_attention, fused LayerNorm/RMSNorm, fused optimizers), and drop needless " ..
              "dtype conversions and .contiguous() copies.", row.op_type, row.op_type),
            estimated_savings_ns = savings,
            savings_method = string.format(
              "kernel time of the op type x %.2f (fusion_gain) x the GPU's busy/kernel time ratio", o.fusion_gain),
            confidence = 0.4,
            evidence = {
              device_id = dev.device_id,
              op_type = row.op_type,
              op_type_kernel_ns = row.ns,
              kernels = row.kernels,
              matmul_kernel_ns = matmul_ns,
              ratio = ratio,
            },
            scope = { device_id = dev.device_id, iter_first = row.first, iter_last = row.last },
          }
        end
      end
    end
  end,
}
