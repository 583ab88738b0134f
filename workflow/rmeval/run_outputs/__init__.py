"""Run-level outputs: the files that belong to the whole run, not to one benchmark.

`results/tables/reproduction.{csv,md,tex}`, `results/summary.md` and the report's front page are gathered from
each enabled benchmark's own part, which its catalogue declares (`Benchmark.reproduction`, `summary_section`,
`report_section`); nothing here names a benchmark. `catalogue` declares the files (import-free), `plan` what the
rules of workflow/rules/run.smk pass (parse time, light), `context` what a benchmark's provider is given,
`comparison` the rows a reproduction provider returns, `reproduction` and `summary` the commands, `report` the
front page's sections.
"""
