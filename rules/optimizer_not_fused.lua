-- rules/optimizer_not_fused.lua — optimizer-not-fused
--
-- What: the optimizer step (and zero_grad) launches one small elementwise kernel per parameter
-- and per operation (aten::add_, aten::mul_, aten::zero_ ...) instead of a few fused
-- multi_tensor_apply / fused Adam kernels.
-- Why: each of those kernels is a CPU-side dispatch plus a launch; with hundreds of parameters the
-- step is bound by the host, and the GPU waits. PyTorch's foreach (multi_tensor_apply) and fused
-- implementations do the same work in a handful of launches.
return {
  id = "optimizer-not-fused",
  title = "The optimizer updates parameters one kernel at a time",
  doc = [[
Counts the GPU kernels launched by optimizer-pass ops (optimizer.step and zero_grad) per
iteration that are not multi_tensor_apply / fused optimizer kernels. Many such kernels per step
mean a per-parameter ("for-loop") optimizer: the step costs one dispatch and launch per parameter
and operation. The estimate is the GPU-idle time inside the optimizer's runs of kernels (from the
first to the last optimizer kernel of a run within one iteration, minus their kernel time; at most
the optimizer ops' host time) times `recoverable_fraction`: the launch gaps a fused optimizer
removes. The host time of the optimizer
ops is not the saving: for most of it the GPU is still busy with the backward pass queued before.
The saving is claimed as `optimizer-kernels:t<trace>:d<device>`, the key no-fusion uses for the
same kernels, so the ranking counts it once.]],
  needs = { "kernels", "ops", "iterations" },
  options = {
    min_kernels_per_step = { default = 100, doc = "report from this many unfused optimizer kernels per iteration" },
    max_fused_share = { default = 0.5, doc = "stay silent when fused kernels already are this share of optimizer kernels" },
    recoverable_fraction = { default = 0.8, doc = "share of the GPU-idle time between optimizer kernels a fused optimizer removes" },
    min_wall_share = { default = 0.005, doc = "report only when the estimate is at least this share of wall time" },
  },

  evaluate = function(ctx)
    local o = ctx.options
    local iterations = ctx.summary.iterations.count
    if iterations == 0 then return end
    -- Kernels of optimizer-pass ops, split into fused (multi_tensor_apply, fused Adam/SGD ...) and not.
    local k = ctx:query([[
      SELECT count(*) AS kernels, coalesce(sum(k.dur_ns), 0) AS kernel_ns,
             coalesce(sum(k.name_id IN (SELECT n.name_id FROM (SELECT DISTINCT name_id FROM _kernel) n
                                        JOIN string s ON s.id = n.name_id
                                        WHERE s.value LIKE '%multi_tensor_apply%' OR s.value LIKE '%fused%'
                                           OR s.value LIKE '%Fused%')), 0) AS fused,
             count(DISTINCT k.iteration) AS steps, min(k.iteration) AS first, max(k.iteration) AS last
      FROM _kernel k JOIN _op o ON o.id = k.op_id
      WHERE k.trace_id = ? AND o.pass = 'optimizer' AND k.iteration IS NOT NULL]], ctx.trace_id)[1]
    local unfused = k.kernels - k.fused
    if k.kernels == 0 or k.steps == 0 then return end
    local per_step = unfused / k.steps
    if k.fused / k.kernels >= o.max_fused_share then return end  -- already fused: nothing to measure
    if per_step < o.min_kernels_per_step then
      ctx:below_threshold{ measured = "unfused optimizer kernels per iteration", value = per_step,
                           threshold = o.min_kernels_per_step, unit = "kernels" }
      return
    end

    -- Host time of the top-level optimizer ops that launched unfused kernels, and their names. The
    -- parent is looked up by id (an op's parent is in its trace): NOT IN over every optimizer op
    -- of the trace scanned the op table a second time.
    local ops, host_ns, names = {}, 0, {}
    for row in ctx:rows([[
        SELECT s.value AS name, count(*) AS calls, sum(o.dur_ns) AS host_ns
        FROM _op o JOIN string s ON s.id = o.name_id
        WHERE o.trace_id = ? AND o.pass = 'optimizer' AND o.iteration IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM _op p WHERE p.id = o.parent_id AND p.pass = 'optimizer')
          AND o.kernel_count > 0
        GROUP BY s.value ORDER BY host_ns DESC]], ctx.trace_id) do
      ops[#ops + 1] = row
      host_ns = host_ns + row.host_ns
      if #names < 4 then
        names[#names + 1] = string.format("%s ×%d (%s)", row.name, row.calls, proflint.format_ns(row.host_ns))
      end
    end
    -- GPU-idle time the fix removes: optimizer kernels of one iteration that follow each other with
    -- no other kernel between them on their GPU form a run; inside a run the GPU idles where the
    -- host had not yet launched the next tiny kernel. A run's idle time is its span minus its kernel
    -- time (overlapping kernels only make that smaller). Runs never cross an iteration boundary (the
    -- next step's input loading is not the optimizer's), and the total is capped at the host time
    -- of the optimizer ops: the GPU cannot wait on them longer than they ran.
    local idle_ns, runs, claims, per_device = 0, 0, {}, {}
    for row in ctx:rows([[
        WITH k AS (
          SELECT coalesce(k.device_id, 0) AS d, k.iteration AS it, k.start_ns AS s, k.start_ns + k.dur_ns AS e, k.id AS id,
                 coalesce(o.pass = 'optimizer', 0) AS opt
          FROM _kernel k LEFT JOIN _op o ON o.id = k.op_id
          WHERE k.trace_id = ? AND k.iteration IS NOT NULL),
        g AS (
          SELECT d, it, s, e, opt, sum(1 - opt) OVER (PARTITION BY d, it ORDER BY s, id ROWS UNBOUNDED PRECEDING) AS run
          FROM k)
        SELECT d AS device_id, run, max(e) - min(s) AS span_ns, sum(e - s) AS kernel_ns
        FROM g WHERE opt = 1 GROUP BY d, it, run]], ctx.trace_id) do
      local idle = math.max(0, row.span_ns - row.kernel_ns)
      idle_ns = idle_ns + idle
      runs = runs + 1
      per_device[row.device_id] = (per_device[row.device_id] or 0) + idle
    end
    local cap = idle_ns > host_ns and host_ns / idle_ns or 1
    local savings = math.floor(idle_ns * cap * o.recoverable_fraction)
    for device, idle in pairs(per_device) do
      claims[string.format("optimizer-kernels:t%d:d%d", ctx.trace_id, device)] = math.floor(idle * cap * o.recoverable_fraction)
    end
    if savings < o.min_wall_share * ctx.summary.wall_ns then
      ctx:below_threshold{ measured = "estimated saving (GPU-idle time between unfused optimizer kernels x " ..
                                      "recoverable_fraction)",
                           value = savings / ctx.summary.wall_ns, threshold = o.min_wall_share,
                           unit = "share of wall time" }
      return
    end

    ctx:report{
      problem = string.format(
        "The optimizer launched %d kernels per iteration that are not fused (%d in %d iterations, %s of GPU time; " ..
        "%d fused multi_tensor_apply kernels): one small kernel per parameter and operation. The ops that " ..
        "launched them spent %s on the host (%s of wall time): %s. Between the optimizer kernels the GPU sat idle " ..
        "%s in %d runs, waiting for the host to launch the next one.",
        math.floor(per_step + 0.5), unfused, k.steps, proflint.format_ns(k.kernel_ns), k.fused,
        proflint.format_ns(host_ns), proflint.format_percent(host_ns / ctx.summary.wall_ns), table.concat(names, ", "),
        proflint.format_ns(idle_ns), runs),
      recommendation =
        "Use the fused or foreach optimizer implementations: torch.optim.AdamW(params, lr=..., fused=True) " ..
        "(or foreach=True, the default on CUDA since PyTorch 2.0 unless it was turned off), likewise SGD/Adam; " ..
        "apex.optimizers.FusedAdam/FusedSGD on older PyTorch. Clear gradients with " ..
        "optimizer.zero_grad(set_to_none=True) instead of zeroing each one.",
      estimated_savings_ns = savings,
      claims = claims,
      savings_method = string.format(
        "GPU-idle time inside the runs of optimizer kernels (span minus kernel time; at most the " ..
        "optimizer ops' host time) x %.2f " ..
        "(recoverable_fraction: the launch gaps a fused optimizer removes)", o.recoverable_fraction),
      confidence = 0.6,
      evidence = {
        unfused_kernels = unfused,
        fused_kernels = k.fused,
        unfused_kernels_per_step = math.floor(per_step + 0.5),
        optimizer_kernel_ns = k.kernel_ns,
        optimizer_host_ns = host_ns,
        optimizer_gpu_idle_ns = idle_ns,
        optimizer_kernel_runs = runs,
        top_ops = names,
      },
      scope = { iter_first = k.first, iter_last = k.last },
    }
  end,
}
