-- rules/examples/attention_tensor_cores.lua — attention-tensor-cores (an example for teams; not enabled by default)
--
-- What: "our attention kernels must use Tensor Cores": attention kernels (flash/fused multi-head
-- attention, and GEMMs launched by attention ops) that run on CUDA cores.
-- Why: a model that should run attention in FP16/BF16 on Tensor Cores silently falls back to an
-- FP32 or math path when a dtype, mask or head size is not supported by the fused kernels.
-- Shows the proflint.* helpers: the kernel table is re-checked by name with
-- proflint.uses_tensor_cores and proflint.category.
return {
  id = "attention-tensor-cores",
  title = "Attention kernels run without Tensor Cores",
  doc = [[
Lists the kernels launched by ops whose name contains one of `op_patterns` (or whose kernel
category is attention) that do not use Tensor Cores, and reports them when they take at least
`min_share` of the attention kernel time. The estimate assumes Tensor Core kernels are
`expected_speedup` times faster.]],
  needs = { "kernels", "ops" },
  options = {
    op_patterns = { default = { "attention", "sdpa", "mha" }, doc = "lower-case substrings of attention op names" },
    min_share = { default = 0.2, doc = "report when non-Tensor-Core kernels are this share of attention time" },
    expected_speedup = { default = 4.0, doc = "assumed speed-up of Tensor Core attention kernels" },
  },

  evaluate = function(ctx)
    local o = ctx.options
    local total_ns, slow_ns, slow = 0, 0, {}
    for row in ctx:rows([[
        SELECT k.name AS kernel, lower(o.name) AS op, count(*) AS n, sum(k.dur_ns) AS ns
        FROM kernel k JOIN op o ON o.id = k.op_id WHERE k.trace_id = ?
        GROUP BY k.name_id, o.name_id]], ctx.trace_id) do
      local attention = proflint.category(row.kernel) == "attention"
      for _, p in ipairs(o.op_patterns) do
        if row.op:find(p, 1, true) then attention = true end
      end
      local matmul = ({ gemm = true, attention = true })[proflint.category(row.kernel)]
      if attention and matmul then
        total_ns = total_ns + row.ns
        if not proflint.uses_tensor_cores(row.kernel) then
          slow_ns = slow_ns + row.ns
          slow[#slow + 1] = string.format("%s ×%d (%s)", row.kernel:sub(1, 80), row.n, proflint.format_ns(row.ns))
        end
      end
    end
    if total_ns == 0 or slow_ns / total_ns < o.min_share then return end
    ctx:report{
      problem = string.format("%s of the %s of attention GEMM/attention kernel time runs without Tensor Cores: %s.",
                              proflint.format_ns(slow_ns), proflint.format_ns(total_ns), table.concat(slow, ", ", 1, math.min(#slow, 5))),
      recommendation = "Run attention under torch.autocast (bf16/fp16) and use F.scaled_dot_product_attention " ..
                       "with a supported head size (a multiple of 8, at most 256) and mask type, so PyTorch picks " ..
                       "the flash or memory-efficient Tensor Core kernels.",
      estimated_savings_ns = math.floor(slow_ns * (1 - 1 / o.expected_speedup)),
      savings_method = "attention kernel time on CUDA cores x (1 - 1/expected_speedup)",
      confidence = 0.5,
      evidence = { attention_kernel_ns = total_ns, non_tensor_core_ns = slow_ns, kernels = slow },
    }
  end,
}
