"""The simulation protocol: the Table record, calibration of the scale (step 3) and
generation by rejection sampling (step 4)."""

from lbm_bench.protocol.calibration import calibrate_scale
from lbm_bench.protocol.generate import RejectionError, generate_table
from lbm_bench.protocol.table import CalibrationResult, RejectionRecord, Table

__all__ = [
    "CalibrationResult",
    "RejectionError",
    "RejectionRecord",
    "Table",
    "calibrate_scale",
    "generate_table",
]
