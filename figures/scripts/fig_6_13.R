# Thesis Figure 6.13 (T2044): "ReStore achieves the lowest normalized latency (relative to Static)
# under standard benchmarks and real-world traces, consistently outperforming all other baselines."
# Each policy's data access time (virtual time, deterministic) over Static's on the same trace,
# mean over seeds: YCSB (YCSB's scrambled zipfian, theta 0.99, at the profile's size, tiers as in
# T2046: 10M / 20M / 70M of 62M pages) and the traces configured in configs/experiments/restore.yaml.
# Black diamonds (YCSB): where each baseline's bar would be with the thesis's factors of ReStore
# over it (2.3, 2, 2.2, 2.1 and 1.5x, T2046).
# Reads results/restore/fig_6_13.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
runs <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

names <- c(ycsb = "YCSB", tpcc = "TPC-C", tpce = "TPC-E", thesios = "Thesios")
traces <- unique(runs$trace)
d <- aggregate(normalized_data_access ~ trace + policy, runs, mean)
d$x <- restore_bar_x(factor(d$trace, levels = traces), d$policy)
d$policy_label <- restore_policy_factor(d$policy)
half <- 0.8 / length(restore_policy_names) / 2

baselines <- c("tlfu", "tlru", "lrfu", "exd", "temp")
ycsb <- d[d$trace == "ycsb", ]
marks <- ycsb[ycsb$policy %in% baselines, ]
if (nrow(marks) > 0 && any(ycsb$policy == "restore")) {
  factor_of <- vapply(marks$policy, function(p) {
    reference_value(reference, sprintf("restore_ycsb_runtime_reduction_vs_%s", p))
  }, numeric(1))
  marks$thesis <- ycsb$normalized_data_access[ycsb$policy == "restore"] * factor_of
}

p <- ggplot(d) +
  geom_hline(yintercept = 1, colour = "grey60", linewidth = 0.3) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = 0, ymax = normalized_data_access, fill = policy_label)) +
  scale_fill_restore_policy() +
  scale_x_continuous(breaks = seq_along(traces), labels = ifelse(traces %in% names(names), names[traces], traces)) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  guides(fill = guide_legend(nrow = 1)) +
  labs(x = NULL, y = "Latency normalized to Static",
       subtitle = "diamonds: the thesis's factors of ReStore over each baseline (YCSB)\napplied to our ReStore bar") +
  theme_thesis()
if ("thesis" %in% names(marks)) {
  p <- p + geom_point(data = marks, aes(x, thesis), shape = 18, size = 2, colour = "black")
}
save_figure(p, io$output, width = max(5.5, 2.5 + 1.6 * length(traces)), height = 3.4, title = "Thesis Figure 6.13")
