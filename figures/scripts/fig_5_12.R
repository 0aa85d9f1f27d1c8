# Thesis Figure 5.12 (T1599): "CAVE achieves lower runtime for PageRank, outperforming GraphChi and GridGraph."
# PageRank runtime against the cache size (a share of the graph's file), one panel per generated
# graph: CAVE non-blocked and blocked, GraphChi, GridGraph and Mosaic (each with the same cache share of
# CAVE's file as its memory budget, enforced with a memory cgroup that charges the page cache; the
# same PageRank: 10 synchronous iterations from 1, damping 0.85, every score checked), and the
# in-memory reference (scipy, the whole graph in memory).
# Reads results/cave/fig_5_12.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
p <- plot_cave_cache(d) +
  labs(subtitle = sprintf("PageRank on %s with %d concurrent I/Os",
                          paste(unique(d$device[d$system != "in-memory reference (scipy)"]), collapse = ", "),
                          as.integer(max(d$io_threads, na.rm = TRUE))))
save_figure(p, io$output, width = 6.5, height = 3, title = "Figure 5.12")
