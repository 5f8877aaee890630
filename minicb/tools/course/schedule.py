"""Who ran where, when: a run's batch rows against its steps, drawn (minicb demo's
figure, and notebook 04's)."""
import matplotlib.pyplot as plt
import numpy as np


# ANCHOR: schedule
def plot_schedule(run, title, ax=None):
    """Who ran where, when: each request a colour, white where a row did no
    useful work. Drawn from every step (prefill and decode)."""
    grid = run.schedule_grid().T.astype(float)                  # [rows, steps]
    if ax is None:
        _, ax = plt.subplots(figsize=(12, 0.6 + 0.3 * grid.shape[0]))
    colours = plt.get_cmap("tab20")
    image = np.ones((*grid.shape, 3))
    for value in np.unique(grid[grid >= 0]):
        image[grid == value] = colours(int(value) % 20)[:3]
    ax.imshow(image, aspect="auto", interpolation="nearest")
    ax.set_xlabel("step (forward pass)")
    ax.set_ylabel("batch row")
    ax.set_title(f"{title}: {run.num_steps} steps, {run.occupancy:.0%} of rows busy")
    return ax
# ANCHOR_END: schedule
