# Thesis Figure 5.11 (T1583-1595): "(A) CAVE performs well across all datasets for PWCC. (B) CAVE
# outperforms single-node GraphX deployment." WCC of CAVE and of each baseline on the PCIe-like
# emulated SSD with the device's k_r threads and a memory budget of 3 % of CAVE's file, every answer
# checked against the reference. (A) CAVE's speedup over each baseline per generated graph; (B) the
# runtimes themselves, GraphX's among them: one node, the whole graph in memory, as the thesis ran it
# (no memory budget; the thesis's speedups over it in the caption).
# Reads results/cave/fig_5_11.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])
a <- plot_cave_speedups(d, cave_thesis_speedups(reference, "cave_pwcc_speedup")) +
  labs(subtitle = "(A) CAVE's speedup, WCC")
graphx_x <- sapply(c("rn", "lj", "yt"), function(g) reference_value(reference, paste0("cave_wcc_vs_graphx_", g)))
graphx_thesis <- paste0("thesis: CAVE ", paste(sprintf("%sx on %s", graphx_x, c("RN", "LJ", "YT")), collapse = ", "),
                        " faster than GraphX")
# B: the runtimes; a run stopped at the time limit is drawn at the limit, as an upward triangle
shown <- d[d$status %in% c("ran", "timed_out"), ]
shown$runtime_s <- ifelse(shown$status == "timed_out", shown$time_limit_s, shown$runtime_s)
shown$bound <- ifelse(shown$status == "timed_out", "stopped at the time limit", "measured")
shown$graph_label <- sub(" (", "\n(", cave_graph_label(shown$graph), fixed = TRUE)
b <- ggplot(shown, aes(graph_label, runtime_s, colour = system, shape = bound)) +
  geom_point(position = position_dodge(width = 0.6), size = 2) +
  scale_colour_manual(name = NULL, values = c(CAVE = "grey40", CAVE_blocked = "black", cave_baseline_colours)) +
  scale_shape_manual(name = NULL, values = c(measured = 16, "stopped at the time limit" = 2)) +
  scale_y_continuous(trans = "log10") +
  facet_wrap(~cave_device_label(device, device_k_r)) +
  guides(colour = guide_legend(order = 1, nrow = 2), shape = guide_legend(order = 2, nrow = 2)) +
  labs(x = NULL, y = "Runtime (s)", subtitle = "(B) WCC runtime (GraphX: in memory)",
       caption = paste(c(cave_not_run(d, statuses = c("cannot_run", "over_budget")), graphx_thesis), collapse = "\n")) +
  theme_thesis() + theme(axis.text.x = element_text(size = 6.5))
save_figure(stack_plots(list(a, b), c(1, 1), 4.8, 6), io$output, width = 4.8, height = 6, title = "Figure 5.11")
