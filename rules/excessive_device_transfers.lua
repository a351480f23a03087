-- rules/excessive_device_transfers.lua — excessive-device-transfers
--
-- What: many host<->device copies issued by framework ops (aten::to, aten::copy_, aten::_to_copy,
-- .item()/.cpu()) inside each training step.
-- Why: the input batch needs one or two copies per step; more than that usually means tensors that
-- are created on the CPU inside the step (torch.tensor(...), masks, indices, constants) and moved
-- every time, or values read back for logging. Each copy costs a launch and often a sync.
return {
  id = "excessive-device-transfers",
  title = "Many host-device copies inside each step",
  doc = [[
Counts host-to-device and device-to-host memcpys attributed to framework ops inside iterations.
Reports when the median step has more than `max_per_step` of them. The estimate is the copies'
GPU time times `avoidable_fraction` (copies of constants can be hoisted out of the loop, the rest
made asynchronous).]],
  needs = { "memcpy", "ops", "iterations" },
  options = {
    max_per_step = { default = 8, doc = "host<->device copies per step that are tolerated (batch, targets, a few reads)" },
    avoidable_fraction = { default = 0.5, doc = "share of the copies' time that moving them out of the step saves" },
    min_savings_ns = { default = 100000, doc = "report only when the estimate is at least this many nanoseconds" },
  },

  evaluate = function(ctx)
    local o = ctx.options
    local per_step, total, total_ns, bytes = {}, 0, 0, 0
    local first, last
    for row in ctx:rows([[
        SELECT m.iteration AS iteration, count(*) AS copies, sum(m.dur_ns) AS ns, coalesce(sum(m.bytes), 0) AS bytes
        FROM memcpy m JOIN op o ON o.id = m.op_id
        WHERE m.trace_id = ? AND m.kind IN ('htod', 'dtoh') AND m.iteration IS NOT NULL
          AND o.name NOT LIKE 'unassociated:%'
        GROUP BY m.iteration ORDER BY m.iteration]], ctx.trace_id) do
      per_step[#per_step + 1] = row.copies
      total = total + row.copies
      total_ns = total_ns + row.ns
      bytes = bytes + row.bytes
      first = first or row.iteration
      last = row.iteration
    end
    local steps = ctx.summary.iterations.count
    if steps == 0 or total == 0 then return end
    -- Steps without any copy count as 0 for the median.
    while #per_step < steps do table.insert(per_step, 1, 0) end
    table.sort(per_step)
    local median = per_step[(#per_step + 1) // 2]
    if median <= o.max_per_step then return end
    local savings = math.floor(total_ns * o.avoidable_fraction)
    if savings < o.min_savings_ns then return end

    local by_op = {}
    for _, row in ipairs(ctx:query([[
        SELECT o.name AS op, m.kind AS kind, count(*) AS copies, sum(m.dur_ns) AS ns
        FROM memcpy m JOIN op o ON o.id = m.op_id
        WHERE m.trace_id = ? AND m.kind IN ('htod', 'dtoh') AND m.iteration IS NOT NULL
          AND o.name NOT LIKE 'unassociated:%'
        GROUP BY o.name, m.kind ORDER BY copies DESC, ns DESC LIMIT 5]], ctx.trace_id)) do
      by_op[#by_op + 1] = string.format("%s %s ×%d (%s)", row.op, row.kind == "htod" and "host-to-device" or "device-to-host",
                                        row.copies, proflint.format_ns(row.ns))
    end

    ctx:report{
      problem = string.format(
        "The median step issued %d host<->device copies from framework ops (more than the %d expected for a batch " ..
        "and a few reads): %d copies in %d steps, %s, %s of GPU copy time. By op: %s.",
        median, o.max_per_step, total, steps, proflint.format_bytes(bytes), proflint.format_ns(total_ns),
        table.concat(by_op, ", ")),
      recommendation =
        "Create constant tensors once, on the GPU, outside the training loop (torch.tensor(..., device='cuda'), " ..
        "or register_buffer in the module) instead of building them on the CPU and calling .to(device) every " ..
        "step; keep indices and masks on the GPU; move the batch once with .to(device, non_blocking=True) from " ..
        "pinned memory; read metrics with .item()/.cpu() every N steps, not every step.",
      estimated_savings_ns = savings,
      savings_method = string.format("GPU time of the in-step host<->device copies x %.2f (avoidable_fraction)",
                                     o.avoidable_fraction),
      confidence = 0.5,
      evidence = {
        copies = total,
        median_copies_per_step = median,
        copy_time_ns = total_ns,
        bytes = bytes,
        steps = steps,
        top_ops = by_op,
      },
      scope = { iter_first = first, iter_last = last },
    }
  end,
}
