"""Task supervision: plan, operate, validate, interrogate, rescue and delegate (see runner.py)."""
