# Thesis Figure 5.5 (T1503): "Lock waiting time remains low as we increase the number of concurrent
# I/Os." Parallel BFS (blocked) on the social graph (as FS): the share of the reader threads'
# running time spent waiting for the cache pool's global lock, against the number of concurrent
# I/Os. Black diamond: the thesis's 1.3 % at 64 concurrent I/Os.
# Reads results/cave/fig_5_5.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])
thesis <- data.frame(io_threads = 64, lock_wait_pct = reference_value(reference, "cave_lock_wait_pct_64ios"))
p <- plot_cave_concurrency(d, "lock_wait_pct", "Time waiting for the global lock (%)") +
  geom_point(data = thesis, aes(io_threads, lock_wait_pct), inherit.aes = FALSE, shape = 18, size = 3) +
  labs(subtitle = "black diamond: thesis (FS, 64 concurrent I/Os)")
save_figure(p, io$output, width = 4.5, height = 3.2, title = "Figure 5.5")
