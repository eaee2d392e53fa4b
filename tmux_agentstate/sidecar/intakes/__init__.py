"""The intakes: how the screens of the watched panes come to be known (see base.Intake)."""
from .base import Intake, Wake
from .capture import CaptureIntake
from .emulate import EmulateIntake
from .pipe import PipeIntake

__all__ = ["Intake", "Wake", "CaptureIntake", "EmulateIntake", "PipeIntake"]
