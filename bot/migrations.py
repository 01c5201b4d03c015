"""Where the SQL migrations are: its own module so that the light commands (`bullpen db`,
`web login`, `symbols`) find them without importing the app."""

from pathlib import Path

MIGRATIONS = Path(__file__).resolve().parent.parent / "migrations"
