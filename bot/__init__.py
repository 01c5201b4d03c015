"""Composition root: settings, app lifecycle, CLI, gateway, command router, renderer."""
