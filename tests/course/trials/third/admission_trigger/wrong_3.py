"""Misconception: "requests waiting per running one" as whole requests (floor division), compared
with the ratio. ratio 0.5, 1 waiting, 2 running: 1 // 2 = 0 < 0.5 says closed; 1 >= 0.5 x 2 says open.
"""


def admission_open(self) -> bool:
    """May requests be admitted before this step?"""
    cfg = self.config
    self.steps_since_admission += 1
    if self.running:
        if self.steps_since_admission < cfg.schedule_interval:
            return False
        if len(self.waiting) // len(self.running) < cfg.waiting_served_ratio:
            return False
    self.steps_since_admission = 0
    return True
