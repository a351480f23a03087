-- tests/lua/hostile/broken_rule.lua — every field wrong: `proflint rules check` must list each one.
return {
  id = "Bad_Id",
  titel = "x",
  needs = { "kernel" },
  severity = "urgent",
  options = 3,
  evaluate = 5,
}
