"""Subcommands that live outside ``workbench.cli`` and are registered on its group."""
