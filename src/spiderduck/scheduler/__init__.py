"""The scheduler role: the intake loop and its stages (decide, fetch, process, store, emit), and
what becomes of each message."""
