"""grader: behavioral grading of a monitoring workspace through promtool, amtool and Alertmanager semantics."""
