"""Hostile input: what an attacker or a careless user gives evaldsl, area by area."""
