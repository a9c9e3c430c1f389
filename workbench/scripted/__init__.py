"""The offline ``scripted`` model: plays the built-in tasks with real token counts."""

SCRIPTED_MODELS = ("scripted", "scripted:paced")
"""The model specs the scripted model answers to; anything else is a real model, checked before any arm starts."""
