"""recorder.reference: the scripted reference policies (oracle, nop, partial, mutants,
adversaries) and what they know about a task."""
