"""The Textual workbench: a thin App, screens with their .tcss beside them, and widgets."""
