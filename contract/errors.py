"""The error hierarchy of 3amBench Replay: every failure a user can act on, by kind.

The CLI maps each kind to an exit code in one table (``alertforge/cli/exit_codes.py``): bad
input and tool failures exit 2, a model endpoint, an environment or a refusal exits 1.
Stages raise subclasses of these (``grader.promtool.GraderError`` is a :class:`ToolFailure`)
so that no stage imports the CLI and the CLI needs no stage to know the kinds.
"""


class AlertforgeError(Exception):
    """Base of every error the CLI reports as a one-line message instead of a traceback."""


class BadInput(AlertforgeError):
    """Input that cannot be used: a missing or malformed file, an unknown task or policy.

    ``path`` names the file (or directory) at fault; ``str(err)`` says what is wrong with it.
    The CLI prints ``alertforge: <path>: <problem>`` and exits with code 2.
    """

    def __init__(self, path: object, problem: str):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")

    def __reduce__(self):
        """Pickled with both arguments, so it crosses a process pool as itself."""
        return (type(self), (self.path, self.problem))


class ToolFailure(AlertforgeError, RuntimeError):
    """A real tool (promtool, amtool, the Alertmanager server) failed in a way no check
    explains: a crash, a timeout, an answer that cannot be read. Exit code 2."""


class EndpointFailure(AlertforgeError, RuntimeError):
    """A model endpoint failed (connection, HTTP status, timeout, malformed reply). A run
    already started is kept, so the same command resumes it. Exit code 1."""


class EnvironmentFailure(AlertforgeError, RuntimeError):
    """An environment an agent acts in cannot go on: unreachable after a retry, a broken
    answer, another client interfering. ``url`` names the server. Exit code 1."""

    def __init__(self, url: str, problem: str):
        self.url = url
        self.problem = problem
        super().__init__(f"{url}: {problem}")


class ClusterFailure(AlertforgeError, RuntimeError):
    """The Ray cluster a command was sent to (``--ray``) cannot do the work: nothing listens
    at the address, a worker node lacks a tool or the tasks, or a grade keeps failing on
    every worker it is retried on. ``where`` names the address or the node. Exit code 1."""

    def __init__(self, where: str, problem: str):
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}")


class HelperDied(AlertforgeError, RuntimeError):
    """A process a command started for part of its work (an export's gallery pages) ended
    without its result: killed by a signal (the OOM killer, a kill) or exited. The command
    stops without leaving anything half written (an export's site stays as it was). Exit code 1."""


class Refused(AlertforgeError):
    """An operation refused as unsafe or impossible as asked (publishing a site that holds a
    file over the Space's limit). ``path`` names the file. Exit code 1."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem
