"""emussd: an emulated SSD (FUSE). The Python side: emussd.harness builds and mounts it."""
