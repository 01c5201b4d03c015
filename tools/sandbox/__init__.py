"""Running code the agent (or a user, or the LLM's own tools) wrote, safely.

Two layers, both on by default (`SandboxPolicy` turns one off only by name): a static AST check
(`ast_check`), then a child process (`runner.py`) with OS limits and namespaces and an
in-process guard. `Sandbox.run` is the one entry point.
"""

from tools.sandbox.ast_check import Violation, check_code
from tools.sandbox.host import (
    Sandbox,
    SandboxLimits,
    SandboxRun,
    ScriptFailed,
    default_sandbox,
    use_sandbox,
)
from tools.sandbox.policy import ALLOWED_MODULES, SandboxPolicy

__all__ = ["ALLOWED_MODULES", "Sandbox", "SandboxLimits", "SandboxPolicy", "SandboxRun",
           "ScriptFailed", "Violation", "check_code", "default_sandbox", "use_sandbox"]
