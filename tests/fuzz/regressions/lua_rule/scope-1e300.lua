return {
  id = "odd-scope", title = "odd", needs = {},
  evaluate = function(ctx)
    ctx:report{ problem = "a", recommendation = "r", estimated_savings_ns = 1000, scope = { iter_first = math.mininteger, iter_last = math.maxinteger, rank = math.maxinteger } }
    ctx:report{ problem = "b", recommendation = "r", estimated_savings_ns = 1000, scope = { device_id = 1e300 } }
  end,
}
