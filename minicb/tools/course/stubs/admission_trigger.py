"""Chapter 6: when the scheduler considers admitting at all.

Rescheduling costs host time, so some servers admit only now and then (TGI's
waiting_served_ratio, lmdeploy's interval). Check:
``python -m minicb check admission_trigger``.
"""


def admission_open(self) -> bool:
    """Called once before each step's admission: may requests be admitted
    now? Always when nothing runs. Otherwise only once
    ``self.config.schedule_interval`` steps have passed since admission was last
    open, and only if at least ``self.config.waiting_served_ratio`` requests wait
    for each one running. Keep the count of steps in
    ``self.steps_since_admission``.
    """
    raise NotImplementedError
