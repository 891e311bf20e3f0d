"""The Plan: the ordered steps a config implies for a mode.

steps.py holds what a Plan is (Step, Plan, skip_reason), refusals.py what the runner refuses
before planning, builder.py what runners plan with, runner.py the runner interface,
registry.py the runners, planner.py how a config becomes steps (`plan_config`) and
benchmark_train.py the runs of benchmark_train.sh. Loading a spec or config file for a plan is
`tipcgen.check.source.plan_source`.
"""
