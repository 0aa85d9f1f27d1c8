# Thesis Figure 3.2 (T628-636): speedup S_PIO of an Unbatchable Reads, Batchable Writes
# application, one panel per read fraction f_r, vs concurrent write I/Os, one line per alpha.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
p <- plot_speedup_panels(d, "k_w", "#concurrent write I/Os (k_w)")
save_figure(p, io$output, width = 6.5, height = 2.6, title = "Thesis Figure 3.2")
