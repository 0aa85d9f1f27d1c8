# Thesis Figure 6.11 (T2030): "Performance under varying read/write ratio with asymmetry (top) and
# without asymmetry (bottom) for 5hf90 workload with 3% Tier 1 and 8% Tier 2 capacity. ReStore
# delivers stable performance." The simulator's data access time (virtual time, deterministic;
# mean over seeds) for read shares r1w .. r99w; top: the tiers' asymmetry (alpha 1.5 / 2 / 4),
# bottom: alpha = 1 on every tier, the same read latencies.
# Reads results/restore/fig_6_11.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
runs <- read_tidy(io$inputs[[1]])

d <- aggregate(data_access_us ~ asymmetry + read_pct + policy, runs, mean)
d$data_s <- d$data_access_us / 1e6
d$policy_label <- restore_policy_factor(d$policy)
d$panel <- factor(d$asymmetry, levels = c("asymmetric", "symmetric"),
                  labels = c("with asymmetry (alpha 1.5 / 2 / 4)", "without asymmetry (alpha 1)"))
reads <- sort(unique(d$read_pct))

p <- ggplot(d, aes(read_pct, data_s, colour = policy_label)) +
  geom_line() + geom_point(size = 0.8) +
  facet_wrap(~panel, ncol = 1, scales = "free_y") +
  scale_colour_restore_policy() +
  scale_x_continuous(breaks = reads, labels = sprintf("r%dw", reads)) +
  expand_limits(y = 0) +
  guides(colour = guide_legend(nrow = 1)) +
  labs(x = "read share", y = "Runtime (s): data access time") +
  theme_thesis()
save_figure(p, io$output, width = 6, height = 5, title = "Thesis Figure 6.11")
