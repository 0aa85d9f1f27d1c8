# Thesis Figure 5.7 (T1557-1560): "(A, B) Performance of PBFS on Optane SSD and SATA SSD for the FS
# dataset. CAVE outperforms the baselines." BFS runtime against the cache size (a share of CAVE's
# file, which is also each baseline's memory budget) on the generated social graph (R-MAT, as FS),
# one panel per device: the Optane-like and SATA-like emulated SSDs of Table 2.2. CAVE non-blocked
# and blocked, GridGraph and Mosaic (the baselines its text names), and the in-memory reference (scipy).
# Reads results/cave/fig_5_7.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
p <- plot_cave_cache(d, facet = "device") +
  labs(subtitle = "BFS on the social graph; each device's k_r threads")
save_figure(p, io$output, width = 6.5, height = 3.2, title = "Figure 5.7")
