"""FerroDDS for Python, with the API of cyclonedds-python: change ``cyclonedds`` to
``ferrodds`` in the imports. Serialization happens in Rust."""

from . import _native  # noqa: F401

__version__ = "0.1.0"

import atexit as _atexit

# Before the interpreter finalizes: no call releases the GIL or runs a listener any more,
# and the threads inside one come back (see crates/ferrodds-py/src/exit.rs).
_atexit.register(_native.at_exit)
