"""Fit to Card: the cheapest plan that makes a run fit a budget (plan.py), host-free."""
