"""`tipcgen migrate`: switching a model repo to tipcgen as one reviewed step.

The repo's own scripts and the generated ones run side by side, on every config and mode, under
recording shims (nothing is downloaded, trained or installed): `prepare_diff` compares what the
two prepare.sh do, `runner_diff` what the two test_train_inference_python.sh run; `report` turns
that into the table a maintainer pastes into the pull request.
"""
