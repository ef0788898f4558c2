"""Big Two Arena: referee, sandboxes, ladder and command line around the `bigtwo` engine."""

__version__ = "0.1.0"
