"""The agent: modes (normal, fast; debate registers from `debate`) and the runner."""

from core.agent.fast import FastMode
from core.agent.normal import NormalMode
from core.agent.runner import AgentRunner
from core.agent.turn import Recorder, Turn

__all__ = ["AgentRunner", "FastMode", "NormalMode", "Recorder", "Turn"]
