"""Both packages on loopback only (set before either is imported)."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))

# Removed when the test session ends (a directory per run was left behind before).
_config_dir = tempfile.TemporaryDirectory(prefix="ferrodds-py-")
_config = os.path.join(_config_dir.name, "ferrodds.toml")
with open(_config, "w") as f:
    f.write('[transport]\ninterface = "lo"\n')
os.environ["FERRODDS_CONFIG"] = _config
os.environ["CYCLONEDDS_URI"] = (
    '<CycloneDDS><Domain id="any"><General><Interfaces>'
    '<NetworkInterface name="lo" multicast="true"/></Interfaces>'
    '<AllowMulticast>spdp</AllowMulticast></General></Domain></CycloneDDS>')
