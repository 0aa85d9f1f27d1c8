# Thesis Figure 6.10 (T2025): "Total runtime under dynamic workloads. ReStore significantly
# outperforms other baselines with the greatest benefit in high drift scenarios (Workloads C & D)."
# One panel per (Tier 1, Tier 2) capacity; bars: the seven policies on workloads A-D (Table 6.4),
# the simulator's data access time (virtual time, deterministic; the CPU time, under 1 % of it, is
# Figure 6.8's and Table 6.6's), mean over seeds. Black diamonds (Tier 1 3 % / Tier 2 8 %): where
# LRFU's bar would be with the thesis's speedup of ReStore over LRFU (2.81, 1.03, 3.51, 4.28x,
# T2022). Below: each baseline's largest runtime / ReStore's over the grid, ours and the thesis's
# (T2027).
# Reads results/restore/fig_6_10.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
runs <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

workloads <- unique(runs$workload)
d <- aggregate(data_access_us ~ workload + t1_pct + t2_pct + policy, runs, mean)
d$data_s <- d$data_access_us / 1e6
d$x <- restore_bar_x(factor(d$workload, levels = workloads), d$policy)
d$policy_label <- restore_policy_factor(d$policy)
d$tier1 <- tier1_factor(d$t1_pct)
d$tier2 <- tier2_factor(d$t2_pct)
half <- 0.8 / length(restore_policy_names) / 2

centre <- d[d$t1_pct == 3 & d$t2_pct == 8, ]
marks <- centre[centre$policy == "lrfu" & centre$workload %in% c("A", "B", "C", "D"), ]
if (nrow(marks) > 0) {
  restore_s <- setNames(centre$data_s[centre$policy == "restore"], centre$workload[centre$policy == "restore"])
  speedup <- vapply(marks$workload, function(w) {
    reference_value(reference, sprintf("restore_dyn_%s_t1_3_t2_8_speedup_vs_lrfu", tolower(w)))
  }, numeric(1))
  marks$thesis_s <- restore_s[marks$workload] * speedup
}

baselines <- c("tlfu", "tlru", "lrfu", "exd", "temp")
ours <- vapply(baselines, function(p) max(runs$restore_speedup[runs$policy == p]), numeric(1))
thesis <- vapply(baselines, function(p) reference_value(reference, sprintf("restore_dyn_speedup_max_vs_%s", p)),
                 numeric(1))
factors <- paste(sprintf("%s %sx (thesis %sx)", restore_policy_names[baselines], sig_format(ours, 2),
                         sig_format(thesis, 2)), collapse = ", ")

p <- ggplot(d) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = 0, ymax = data_s, fill = policy_label)) +
  facet_grid(tier1 ~ tier2) +
  scale_fill_restore_policy() +
  scale_x_continuous(breaks = seq_along(workloads), labels = workloads) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  guides(fill = guide_legend(nrow = 1)) +
  labs(x = NULL, y = "Runtime (s): data access time",
       subtitle = "diamonds: LRFU with the thesis's speedup of ReStore over it (Tier 1 3 % / Tier 2 8 %)",
       caption = paste(strwrap(paste0("Largest runtime of each baseline / ReStore's over the grid: ", factors), 140),
                       collapse = "\n")) +
  theme_thesis() +
  theme(plot.caption = element_text(hjust = 0, size = 6.5))
if (nrow(marks) > 0) {
  p <- p + geom_point(data = marks, aes(x, thesis_s), shape = 18, size = 1.8, colour = "black")
}
save_figure(p, io$output, width = 6.5, height = 1.6 + 1.6 * length(unique(d$t1_pct)), title = "Thesis Figure 6.10")
