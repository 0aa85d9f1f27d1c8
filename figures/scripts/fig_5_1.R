# Thesis Figure 5.1 (T1143-1150), panel B: "CAVE is upto three orders of magnitude faster than GraphChi
# and up to one order of magnitude faster than GridGraph and Mosaic." CAVE's parallel BFS against
# each baseline on the PCIe-like emulated SSD, every system with the device's k_r threads and a
# memory budget of 3 % of CAVE's file (the baselines' enforced with a memory cgroup that charges the
# page cache), every answer checked against the reference: CAVE's speedup (the baseline's runtime /
# CAVE's) per generated graph. Panel A is a diagram.
# Reads results/cave/fig_5_1b.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])
thesis <- cave_thesis_speedups(reference, "cave_pbfs_speedup")
p <- plot_cave_speedups(d, thesis) +
  labs(subtitle = sprintf("(B) BFS, cache %s %% of CAVE's file", sig_format(100 * d$cache_fraction[1], 2)))
save_figure(p, io$output, width = 4.8, height = 3.2, title = "Figure 5.1")
