"""Learner corrections (Swanson & Yamangil 2012): isolate a teacher's corrections, type them, summarise a class."""
