"""Mutation testing of a suite against its recorded runs (`evaldsl mutate`).

The parts: `mutants` (typed changes to a run's normalised events and states, each said in
words) and `mutate` (each mutant re-checked with a case's compiled assertions; mutation
scores per case and suite, and every surviving mutant).
"""
