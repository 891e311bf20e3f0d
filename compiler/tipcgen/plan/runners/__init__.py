"""The runners, one module per upstream script (the interface: plan/runner.py)."""
