"""recorder.importers: runs made elsewhere into runs here (Harbor jobs, ARIA transcripts),
re-graded step by step where the files allow."""
