# Thesis Figure 4.16 (T1093): "Gain of ACE scales with data size." TPC-C's mix as the warehouses
# (and so the database) grow, the pool always 6 % of the database: (A) tpmC (NewOrder transactions
# per minute) of the baseline (dashed) and of ACE (solid); (B) ACE's speedup. The thesis ran 125 to
# 1000 warehouses (15-84 GB) and reports 1.33x at 125 and 1.24x at 1000 (subtitle). One row per device.
# Reads results/ace/fig_4_16.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

subtitle <- sprintf("the thesis: %sx at 125 warehouses, %sx at 1000 (LRU)",
                    reference_value(reference, "ace_tpcc_speedup_125wh"),
                    reference_value(reference, "ace_tpcc_speedup_1000wh"))
p <- plot_ace_sweep(d, "database_size", "TPC-C warehouses", subtitle = subtitle, measure = "tpm_new_order",
                    measure_label = "(A) tpmC") +
  scale_x_continuous(trans = "log2", breaks = sort(unique(d$database_size)))
save_figure(p, io$output, width = 6.5, height = 1 + 2.2 * length(unique(d$device)), title = "Thesis Figure 4.16")
