"""The command-line tools: `quiver`, `quiver-submit` and the calibration of devices."""
