-- rules/examples/step_time_budget.lua — step-time-budget (an example for teams; not enabled by default)
--
-- What: the median training step is slower than the team's budget on a given GPU model, e.g.
-- "step time above 350 ms on A100 is a regression".
-- Why: a budget written down next to the model catches slow-downs the generic detectors cannot
-- know about (a bigger model, a slower kernel after an upgrade). Copy this file into your rules
-- folder, set the options in proflint.toml:
--   [rules.step-time-budget]
--   gpu = "A100"
--   max_step_ms = 350
return {
  id = "step-time-budget",
  title = "The median step is slower than the budget for this GPU",
  doc = [[
Compares the median iteration time with `max_step_ms` on traces whose GPU name contains `gpu`
(all GPUs when `gpu` is empty). The estimate is the excess over the budget in every step.]],
  needs = { "iterations" },
  options = {
    gpu = { default = "A100", doc = "substring of the GPU name the budget applies to ('' = any GPU)" },
    max_step_ms = { default = 350, doc = "budget for the median step, in milliseconds" },
  },
  severity = "high",

  evaluate = function(ctx)
    local o = ctx.options
    local s = ctx.summary
    local gpu_name
    for _, d in ipairs(s.devices) do
      if d.name and (o.gpu == "" or d.name:find(o.gpu, 1, true)) then gpu_name = d.name break end
    end
    if not gpu_name and o.gpu ~= "" then return end
    local budget_ns = math.floor(o.max_step_ms * 1e6)
    local median = s.iterations.median_ns
    if median <= budget_ns then return end
    local over = 0
    for _, d in ipairs(s.iterations.durations_ns) do
      if d > budget_ns then over = over + 1 end
    end
    ctx:report{
      problem = string.format("The median step took %s on %s, over the budget of %s (%d of %d steps over it).",
                              proflint.format_ns(median), gpu_name or "this GPU", proflint.format_ns(budget_ns),
                              over, s.iterations.count),
      recommendation = "Compare with the last profile that met the budget (proflint compare BASELINE CANDIDATE) " ..
                       "and look at the other findings of this report for the cause.",
      estimated_savings_ns = math.floor((median - budget_ns) * s.iterations.count),
      savings_method = "excess of the median step over the budget, times the number of steps",
      confidence = 0.9,
      evidence = { median_step_ns = median, budget_ns = budget_ns, steps_over_budget = over, gpu = gpu_name },
      scope = { iter_first = 0, iter_last = s.iterations.count - 1 },
    }
  end,
}
