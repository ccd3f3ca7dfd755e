"""abstraction package."""
