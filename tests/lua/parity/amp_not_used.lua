-- tests/lua/parity/amp_not_used.lua — amp-not-used, re-written as a Lua rule.
--
-- What: GEMM/convolution/attention kernels of Tensor-Core-eligible ops that ran on CUDA cores on a
-- GPU that has Tensor Cores (mixed precision / TF32 not enabled).
-- Why here: tests/lua/parity_test.cpp runs this file next to the built-in detector
-- (detectors/amp_not_used.cpp) and checks both report the same finding: proof that the Lua API
-- gives a rule everything a built-in detector uses. Its id differs so both can run together.
local NOT_DTYPES = {
  [""] = true, Scalar = true, ScalarList = true, TensorList = true, GenericList = true, Int = true, Bool = true,
  Device = true, Layout = true, ScalarType = true, None = true, String = true, IntList = true,
}

-- First tensor dtype of a Kineto 'Input type' list (["float", "float", "Scalar"] -> "float").
local function first_dtype(text)
  for item in text:gmatch('"([^"]*)"') do
    if not NOT_DTYPES[item] then return item end
  end
  return nil
end

local function short_kernel(name, max_len)
  max_len = max_len or 140
  if name:sub(1, 5) == "void " then name = name:sub(6) end
  local p = name:find("(", 1, true)
  if p and p > 1 then name = name:sub(1, p - 1) end
  if #name > max_len then name = name:sub(1, max_len - 2) .. "…" end
  return name
end

-- The lowest architecture (70, 75, 80, 90, 100 ...) a kernel name proves; 0 when it says nothing.
local function arch_from_kernel_name(name)
  local l = name:lower()
  local arch = 0
  local init = 1
  while true do
    local s, e, digits = l:find("sm_?(%d%d%d?)", init)
    if not s then break end
    local before = s > 1 and l:sub(s - 1, s - 1) or ""
    local after = l:sub(e + 1, e + 1)
    if not before:match("[a-z0-9]") and not after:match("%d") then
      arch = math.max(arch, tonumber(digits))
      break
    end
    init = s + 1
  end
  local c = l:match("cutlass_(%d%d%d?)_")
  if c then arch = math.max(arch, tonumber(c)) end
  for _, f in ipairs({ { "volta_", 70 }, { "turing_", 75 }, { "ampere_", 80 }, { "hopper_", 90 }, { "nvjet", 90 },
                       { "blackwell_", 100 } }) do
    if l:find(f[1], 1, true) then arch = math.max(arch, f[2]) end
  end
  return arch
end

-- k.tc_eligible_op_id: the eligible op the kernel belongs to (the outermost eligible op above it).
local ELIGIBLE = "k.is_tensor_core = 0 AND k.category IN ('gemm', 'conv', 'attention')"

return {
  id = "amp-not-used-lua",
  title = "Tensor-Core-eligible ops run in FP32 without Tensor Cores",
  doc = "The built-in amp-not-used detector as a Lua rule (parity test).",
  needs = { "kernels", "ops" },
  options = {
    expected_speedup = 2.0,
    min_kernel_share = 0.10,
    min_wall_share = 0.002,
    min_savings_ns = 100000,
    top = 5,
  },

  evaluate = function(ctx)
    local o = ctx.options
    local expected_speedup = math.max(1.0, o.expected_speedup)
    local top = math.max(1, math.floor(o.top))
    local summary = ctx.summary
    if summary.wall_ns <= 0 then return end
    local trace_vendor = ctx:query("SELECT vendor FROM trace WHERE trace_id = ?", ctx.trace_id)[1]
    trace_vendor = trace_vendor and trace_vendor.vendor
    local trace_has_tc = #ctx:query("SELECT 1 AS x FROM _kernel WHERE trace_id = ? AND is_tensor_core = 1 LIMIT 1",
                                    ctx.trace_id) > 0

    for _, dev in ipairs(summary.devices) do
      if dev.tc_eligible_not_used_ns > 0 and dev.kernel_time_ns > 0 then
        local vendor = trace_vendor
        local d = ctx:query("SELECT vendor FROM device WHERE trace_id = ? AND device_id = ?", ctx.trace_id,
                            dev.device_id)[1]
        if d and d.vendor then vendor = d.vendor end
        if vendor and vendor ~= "nvidia" then goto continue end

        local arch, arch_source = 0, nil
        if dev.compute_major then
          arch = dev.compute_major * 10 + (dev.compute_minor or 0)
          arch_source = string.format("compute capability %d.%d", dev.compute_major, dev.compute_minor or 0)
        else
          local example
          for row in ctx:rows("SELECT value FROM string WHERE id IN " ..
                              "(SELECT DISTINCT name_id FROM _kernel WHERE trace_id = ? AND device_id IS ?)",
                              ctx.trace_id, dev.device_id) do
            local a = arch_from_kernel_name(row.value)
            if a > arch then arch, example = a, row.value end
          end
          if arch > 0 then
            arch_source = string.format("sm%d+ inferred from kernel names such as %s", arch, short_kernel(example, 40))
          elseif trace_has_tc then
            arch = 70
            arch_source = "inferred: other kernels of this trace use Tensor Cores"
          end
        end
        if arch < 70 then goto continue end
        local cc_known = dev.compute_major ~= nil

        local eligible_ns = dev.tc_eligible_not_used_ns
        local kernel_share = eligible_ns / dev.kernel_time_ns
        if kernel_share < o.min_kernel_share then goto continue end
        local critical = math.min(eligible_ns, math.floor(kernel_share * dev.kernel_busy_ns))
        local savings = math.floor(critical * (1.0 - 1.0 / expected_speedup))
        if savings < o.min_wall_share * summary.wall_ns or savings < o.min_savings_ns then goto continue end

        -- Top ops, with the dtypes recorded for them; a backward op takes those of the first range
        -- with its autograd sequence number that recorded types (its forward op).
        local ops, by_name, groups, wanted = {}, {}, {}, {}
        for row in ctx:rows("SELECT o.name AS name, o.input_types AS types, r.sequence_number AS seq, " ..
                            "sum(k.dur_ns) AS ns, count(*) AS n FROM kernel k JOIN op o ON o.id = k.tc_eligible_op_id " ..
                            "LEFT JOIN _range r ON r.id = o.range_id WHERE k.trace_id = ? AND k.device_id IS ? AND " ..
                            ELIGIBLE .. " GROUP BY o.name, o.input_types, r.sequence_number", ctx.trace_id,
                            dev.device_id) do
          groups[#groups + 1] = row
          if not row.types and row.seq then wanted[row.seq] = false end
        end
        if next(wanted) then
          for row in ctx:rows("SELECT r.sequence_number AS seq, s.value AS types FROM _range r JOIN string s ON " ..
                              "s.id = r.input_types_id WHERE r.trace_id = ? AND r.sequence_number IS NOT NULL " ..
                              "ORDER BY r.start_ns, r.id", ctx.trace_id) do
            if wanted[row.seq] == false then wanted[row.seq] = row.types end
          end
        end
        for _, row in ipairs(groups) do
          local types = row.types or (row.seq and wanted[row.seq] or nil)
          local a = by_name[row.name]
          if not a then
            a = { name = row.name, ns = 0, kernels = 0, dtypes = {} }
            by_name[row.name] = a
            ops[#ops + 1] = a
          end
          a.ns = a.ns + row.ns
          a.kernels = a.kernels + row.n
          local dt = types and first_dtype(types)
          if dt then a.dtypes[dt] = true end
          if not types then a.untyped = true end
        end
        table.sort(ops, function(x, y)
          if x.ns ~= y.ns then return x.ns > y.ns end
          return x.name < y.name
        end)
        local all_dtypes, only_float = {}, true
        for _, a in ipairs(ops) do
          local list = {}
          for dt in pairs(a.dtypes) do
            list[#list + 1] = dt
            all_dtypes[dt] = true
          end
          table.sort(list)
          a.dtype_list = list
        end
        local n_dtypes = 0
        for dt in pairs(all_dtypes) do
          n_dtypes = n_dtypes + 1
          if dt ~= "float" then only_float = false end
        end
        only_float = only_float and n_dtypes == 1

        local kernels = ctx:query("SELECT k.name AS name, sum(k.dur_ns) AS ns, count(*) AS n FROM kernel k " ..
                                  "JOIN op o ON o.id = k.tc_eligible_op_id WHERE k.trace_id = ? AND k.device_id IS ? AND " ..
                                  ELIGIBLE .. " GROUP BY k.name_id ORDER BY 2 DESC, 1 LIMIT ?",
                                  ctx.trace_id, dev.device_id, top)
        local agg = ctx:query("SELECT count(*) AS n, min(k.iteration) AS first, max(k.iteration) AS last " ..
                              "FROM _kernel k JOIN _op o ON o.id = k.tc_eligible_op_id WHERE k.trace_id = ? AND k.device_id IS ? " ..
                              "AND " .. ELIGIBLE, ctx.trace_id, dev.device_id)[1]
        local examples = {}
        for row in ctx:rows("SELECT k.id AS id FROM _kernel k JOIN _op o ON o.id = k.tc_eligible_op_id WHERE k.trace_id = ? " ..
                            "AND k.device_id IS ? AND " .. ELIGIBLE .. " ORDER BY k.dur_ns DESC, k.id LIMIT 3",
                            ctx.trace_id, dev.device_id) do
          examples[#examples + 1] = row.id
        end

        local gpu = dev.name and string.format("GPU %d (%s)", dev.device_id, dev.name) or ("GPU " .. dev.device_id)
        local op_text = {}
        for i = 1, math.min(#ops, top) do
          local a = ops[i]
          local dt = table.concat(a.dtype_list, "/")
          op_text[#op_text + 1] = string.format("%s %s%s", a.name, proflint.format_ns(a.ns),
                                                dt ~= "" and " [" .. dt .. "]" or (a.untyped and " [dtypes not recorded]" or ""))
        end
        local kernel_text, xmma_ffma = {}, false
        for _, k in ipairs(kernels) do
          kernel_text[#kernel_text + 1] = string.format("%s ×%d %s", short_kernel(k.name), k.n, proflint.format_ns(k.ns))
          if k.name:find("xmma", 1, true) and k.name:find("ffma", 1, true) then xmma_ffma = true end
        end
        local extra
        if dev.tensor_core_time_ns > 0 then
          extra = string.format("; %s of kernel time already uses Tensor Cores", proflint.format_percent(dev.tensor_core_share))
        else
          extra = only_float and "; their inputs are FP32 (float)" or ""
        end
        local problem = string.format(
          "On %s, %s of GEMM/convolution kernel time (%s of all kernel time, %d kernels) belongs to " ..
          "Tensor-Core-eligible ops but ran on CUDA cores, not Tensor Cores, although the GPU has them (%s)%s. " ..
          "Top ops: %s. Top kernels: %s.%s",
          gpu, proflint.format_ns(eligible_ns), proflint.format_percent(kernel_share), agg.n, arch_source, extra,
          table.concat(op_text, ", "), table.concat(kernel_text, ", "),
          xmma_ffma and " (Kernels named `xmma` with `ffma` run an FP32 FMA main loop: they are not Tensor Core kernels.)"
            or "")

        local rec
        if arch >= 80 then
          rec = "Run the forward pass and loss under mixed precision: in PyTorch wrap them in " ..
                "`with torch.autocast(\"cuda\", dtype=torch.bfloat16):` (bf16 needs no loss scaling on Ampere and newer); " ..
                "without code changes to the model, enable TF32 for FP32 matmuls and convolutions with " ..
                "`torch.backends.cuda.matmul.allow_tf32 = True` and `torch.backends.cudnn.allow_tf32 = True` " ..
                "(or `torch.set_float32_matmul_precision(\"high\")`). TensorFlow/Keras: " ..
                "`tf.keras.mixed_precision.set_global_policy(\"mixed_bfloat16\")` (or \"mixed_float16\"); TF32 is on by " ..
                "default."
        else
          rec = "Run the forward pass and loss under mixed precision: in PyTorch wrap them in " ..
                "`with torch.autocast(\"cuda\", dtype=torch.float16):` and scale the loss with `scaler = " ..
                "torch.cuda.amp.GradScaler()` (`scaler.scale(loss).backward(); scaler.step(optimizer); " ..
                "scaler.update()`) — this GPU has FP16 Tensor Cores but no BF16/TF32. TensorFlow/Keras: " ..
                "`tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")`."
        end

        local top_ops, top_kernels = {}, {}
        for i = 1, math.min(#ops, top) do
          top_ops[i] = { op = ops[i].name, gpu_time_ns = ops[i].ns, kernels = ops[i].kernels, dtypes = ops[i].dtype_list }
        end
        for i, k in ipairs(kernels) do top_kernels[i] = { kernel = k.name, time_ns = k.ns, count = k.n } end
        ctx:report{
          problem = problem,
          recommendation = rec,
          estimated_savings_ns = savings,
          savings_method = string.format(
            "eligible FP32 kernel time, bounded by its share of the flattened GPU busy time, x (1 - 1/%.1f), the " ..
            "assumed speed-up of FP16/BF16 Tensor Core GEMMs and convolutions over FP32 CUDA-core ones",
            expected_speedup),
          confidence = not cc_known and 0.6 or (n_dtypes == 0 and 0.7 or 0.8),
          evidence = {
            eligible_non_tc_kernel_ns = eligible_ns,
            eligible_non_tc_kernels = agg.n,
            kernel_time_ns = dev.kernel_time_ns,
            share_of_kernel_time = kernel_share,
            kernel_busy_ns = dev.kernel_busy_ns,
            tensor_core_share = dev.tensor_core_share,
            tensor_cores_from = arch_source,
            top_ops = top_ops,
            top_kernels = top_kernels,
            example_kernel_ids = examples,
          },
          scope = { device_id = dev.device_id, iter_first = agg.first, iter_last = agg.last },
        }
      end
      ::continue::
    end
  end,
}
