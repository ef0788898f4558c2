"""The ladder: ratings with honest uncertainty and sequential tests.  (Scheduling, storage
and execution come with the rest of issue 5.)"""
