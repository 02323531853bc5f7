"""FerroDDS for Python, with the API of cyclonedds-python: change ``cyclonedds`` to
``ferrodds`` in the imports. Serialization happens in Rust."""

from . import _native  # noqa: F401

__version__ = "0.1.0"
