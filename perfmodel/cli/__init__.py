"""Command-line interface: a thin shell over perfmodel.api."""
