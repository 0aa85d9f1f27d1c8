# Thesis Figure 4.12 (T1042): "ACE is beneficial across a wide range of bufferpool size." MS with
# the pool swept as a share of the database: (A) runtime of each policy, baseline (dashed) and ACE
# (solid); (B) speedup of ACE over its baseline. Black diamonds: the thesis's ACE-CFLRU speedups
# (1.29x at 2 %, 1.25x at 10 %). One row per device.
# Reads results/ace/fig_4_12.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

d$pool_pct <- 100 * d$pool_fraction
thesis <- data.frame(pool_pct = c(2, 10), value = c(reference_value(reference, "ace_cflru_speedup_bp2pct"),
                                                    reference_value(reference, "ace_cflru_speedup_bp10pct")))
p <- plot_ace_sweep(d, "pool_pct", "bufferpool size (% of the database)", thesis,
                    "diamond: the thesis's ACE-CFLRU speedup")
save_figure(p, io$output, width = 6.5, height = 1 + 2.2 * length(unique(d$device)), title = "Thesis Figure 4.12")
