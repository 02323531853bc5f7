"""What the Cyclone DDS test peers share: loopback pinning and one-line usage errors.

Imported by the peers next to it (their directory is on sys.path when run as scripts).
"""

import argparse
import os
import sys

# Cyclone on loopback, SPDP over multicast (the tests turn multicast on for lo).
DEFAULT_URI = (
    '<CycloneDDS><Domain id="any"><General><Interfaces>'
    '<NetworkInterface name="lo" multicast="true"/></Interfaces>'
    '<AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>'
)


def pin_to_loopback():
    """Pins Cyclone to loopback unless CYCLONEDDS_URI is set and non-empty (call before
    importing cyclonedds)."""
    if not os.environ.get("CYCLONEDDS_URI"):
        os.environ["CYCLONEDDS_URI"] = DEFAULT_URI


class Parser(argparse.ArgumentParser):
    """Usage errors exit 4, with one line on stderr."""

    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(4)
