timezone "UTC"
rule("x", function(n, ctx)
  return { level = "critical"
end)
