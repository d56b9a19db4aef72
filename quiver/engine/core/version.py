"""The release of Quiver this is: read by `quiver.__version__`, `quiver --version` and the build."""

__version__ = "0.1.0"
