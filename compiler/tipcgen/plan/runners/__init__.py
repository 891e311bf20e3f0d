"""Runners: one module per upstream test_train_inference_python.sh (a dialect names its runners in
`Dialect.runners`; `plan.planner.runner_for` loads one). A runner module holds:

- `plan(b: Builder) -> None`: the steps of `b.mode` for the config `b.v`, added with `b.add`
  in the order that repo's script runs them (argv, CUDA_VISIBLE_DEVICES, logs, status paths);
- `TEMPLATE`: the bash template under templates/ that generates the same script;
- `STATUS_FORMAT`: its status_check line ({verdict} {model} {command} {log});
- `MODES`: the modes its script accepts.

The generated bash of a runner and its `plan` are held equal by tests/test_plan_differential.py;
each runner and its repo's real script by the upstream oracle (tests/helpers/upstream.py).
"""
