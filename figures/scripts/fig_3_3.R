# Thesis Figure 3.3 (T641-645): speedup S'_PIO of a Batchable Reads, Unbatchable Writes
# application, one panel per read fraction f_r, vs concurrent read I/Os, one line per alpha.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
p <- plot_speedup_panels(d, "k_r", "#concurrent read I/Os (k_r)")
save_figure(p, io$output, width = 6.5, height = 2.6, title = "Thesis Figure 3.3")
