"""recorder: run policies on tasks, one tool call a step, grading after every change; write runs."""
