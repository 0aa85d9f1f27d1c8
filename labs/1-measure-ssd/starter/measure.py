"""Lab 1: measure an SSD. Fill in the four functions marked TODO (README.md says what each is
graded on). Test locally with `make grade LAB=1 SUBMISSION=<this folder> STUDENT=<your id>` and
the practice key (README.md, "Running it")."""


def sweep(measure, max_threads):
    """Measure the device: call measure(op, threads) with op 'read' or 'write' and 1 to max_threads
    threads; each call runs fio for a fraction of a second and returns a dict with threads, iops,
    bandwidth_bytes_s and lat_mean_us. Return {'read': [points], 'write': [points]}: the points
    your estimate() needs, at most 120 calls in all."""
    # TODO: which thread counts show where the bandwidth stops growing? One run of a point can be
    # disturbed: measure the points your decision rests on more than once.
    return {"read": [measure("read", 1)], "write": [measure("write", 1)]}


def estimate(curves):
    """From sweep()'s curves, the device's k_r, k_w (whole numbers of threads) and alpha (the cost
    of a write in reads, the PIO model's alpha)."""
    # TODO: k: the fewest threads that reach (nearly) the maximum bandwidth. alpha: compare what one
    # request costs at k_w writes and at k_r reads (Little's law: threads / IOPS).
    return {"k_r": 0, "k_w": 0, "alpha": 0.0}


def predict_speedup(read_fraction, alpha, k_w, batch):
    """The PIO model's speedup of a bufferpool that writes dirty pages back in batches of `batch`
    at once, over one at a time, for a workload with `read_fraction` reads."""
    # TODO: thesis Section 3.2 (README.md, "Background").
    return 1.0


def plot(curves, folder):
    """Draw bandwidth against threads for reads and writes into folder/plot.png, plot.pdf or plot.svg."""
    # TODO
    raise NotImplementedError("plot() is not written yet")
