"""Misconception: "always when nothing runs" is a shortcut outside the count, so it neither counts
the step nor restarts the interval. interval 3: open, 1 step, all finish (open, counter stays 1), next opens 1 step early.
"""


def admission_open(self) -> bool:
    """May requests be admitted before this step?"""
    if not self.running:
        return True                          # an idle engine always admits
    cfg = self.config
    self.steps_since_admission += 1
    if self.steps_since_admission < cfg.schedule_interval:
        return False
    if len(self.waiting) < cfg.waiting_served_ratio * len(self.running):
        return False
    self.steps_since_admission = 0
    return True
