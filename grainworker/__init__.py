"""SAND grain worker: runs inside an application's sandbox, one process per grain."""
