"""The one error type for bad input: the CLI turns it into a message on stderr and exit code 2."""


class BadInput(Exception):
    """Input that cannot be used: a missing or malformed file, an unknown task or policy.

    ``path`` names the file (or directory) at fault; ``str(err)`` says what is wrong with it.
    The CLI prints ``alertforge: <path>: <problem>`` and exits with code 2.
    """

    def __init__(self, path: object, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
