# Thesis Figure 4.11 (T1035): "Higher writes lead to greater benefits." The read share swept from
# 0 % (write-only) to 100 % (read-only), locality 90/10. (A) runtime of each policy, baseline
# (dashed) and ACE (solid); (B) speedup of ACE over its baseline. What distinguishes the thesis's
# panels A and B is not stated (T1035-1044); this is our reading. Black diamonds: the
# thesis's speedups of ACE over Clock Sweep (1.57x write-only, 1.34x at 50/50). One row per device.
# Reads results/ace/fig_4_11.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

thesis <- data.frame(read_pct = c(0, 50), value = c(reference_value(reference, "ace_clock_speedup_rw_0_100"),
                                                    reference_value(reference, "ace_clock_speedup_rw_50_50")))
p <- plot_ace_sweep(d, "read_pct", "read/write ratio (%)", thesis,
                    "diamond: the thesis's speedup over Clock Sweep") +
  scale_x_continuous(breaks = seq(0, 100, 25), labels = function(x) sprintf("%d/%d", x, 100 - x))
save_figure(p, io$output, width = 6.5, height = 1 + 2.2 * length(unique(d$device)), title = "Thesis Figure 4.11")
