"""Hostile input, one module per area: what an attacker or a careless user gives evaldsl
(issue "Hardening"). Every case ends in a diagnostic, an error verdict or a clear message,
never a traceback, a hang or an exhausted machine."""
