# Thesis Figure 6.1 (T1683): "From the three different workloads, A is more skewed, and YCSB has more
# drift. [...] Our approach always outperforms the state of the art by up to 2.2x." Bars: the seven
# policies on the three drifting workloads of configs/experiments/restore.yaml (fig_6_1) at the
# sweeps' tier capacities, the simulator's data access time (virtual time, deterministic), mean over
# seeds. Below: the largest runtime of a baseline / ReStore's, ours and the thesis's (T1685).
# Reads results/restore/fig_6_1.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
runs <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

workloads <- unique(runs$workload)
d <- aggregate(data_access_us ~ workload + policy, runs, mean)
d$data_s <- d$data_access_us / 1e6
d$x <- restore_bar_x(factor(d$workload, levels = workloads), d$policy)
d$policy_label <- restore_policy_factor(d$policy)
half <- 0.8 / length(restore_policy_names) / 2

baselines <- runs[runs$policy != "restore", ]
best <- baselines[which.max(baselines$restore_speedup), ]
thesis <- reference_value(reference, "restore_fig6_1_speedup_max")
capacity <- sprintf("Tier 1 %s %%, Tier 2 %s %%", sig_format(runs$t1_pct[1], 2), sig_format(runs$t2_pct[1], 2))

p <- ggplot(d) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = 0, ymax = data_s, fill = policy_label)) +
  scale_fill_restore_policy() +
  scale_x_continuous(breaks = seq_along(workloads), labels = ifelse(workloads == "ycsb", "YCSB", workloads)) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  guides(fill = guide_legend(nrow = 1)) +
  labs(x = NULL, y = "Runtime (s): data access time", subtitle = capacity,
       caption = sprintf("Largest speedup of ReStore over a baseline: %sx (%s on %s); thesis: up to %sx",
                         sig_format(best$restore_speedup, 2), restore_policy_names[[best$policy]], best$workload,
                         sig_format(thesis, 2))) +
  theme_thesis() +
  theme(plot.caption = element_text(hjust = 0, size = 7))
save_figure(p, io$output, width = 6, height = 2.8, title = "Thesis Figure 6.1")
