"""Tools that evolve (seed 004): the LLM writes a tool when none fits, the sandbox verifies it
with its own tests, the store versions it, and verified ones are offered to the agent."""

from tools.evolve.offered import GeneratedToolResult, generated_spec, offer_verified, run_generated
from tools.evolve.shape import ShapeError, ToolShape, extract_code, read_shape
from tools.evolve.synthesizer import (
    SynthesisNeedsModel,
    SynthesisOutcome,
    Synthesizer,
    classify,
    describe_outcome,
)

__all__ = ["GeneratedToolResult", "ShapeError", "SynthesisNeedsModel", "SynthesisOutcome",
           "Synthesizer", "ToolShape", "classify", "describe_outcome", "extract_code",
           "generated_spec", "offer_verified", "read_shape", "run_generated"]
