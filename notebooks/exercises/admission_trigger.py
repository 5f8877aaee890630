"""Chapter 6: when the scheduler considers admitting at all.

Rescheduling costs host time, so some servers admit only now and then (TGI's
waiting_served_ratio, lmdeploy's interval). Check:
``python -m minicb check admission_trigger``.
"""


def admission_open(self) -> bool:
    """Called once before each step's admission. Count this step:
    ``self.steps_since_admission += 1``. Admission is open when nothing is running
    (``self.running`` is empty), or when both

    - at least ``self.config.schedule_interval`` steps have passed since it was
      last open, and
    - ``len(self.waiting) >= self.config.waiting_served_ratio * len(self.running)``.

    When it is open, reset ``self.steps_since_admission`` to 0.
    """
    raise NotImplementedError
