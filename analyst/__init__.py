"""The analyst's domain: what a question asks (`understanding`), shared by every mode.

It sits on `core` and `tools` only (an import-linter contract): no bot, no platform, no LLM.
"""
