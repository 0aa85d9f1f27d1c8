# Thesis Figure 6.8 (T2009): "Overall runtime (CPU time + data access time) under different tier
# capacity configuration and three static workloads." One panel per (Tier 1, Tier 2) capacity, the
# smallest fast tier on top; bars: the seven policies on 5hf90, 10hf90 and 10hf80 (mean over seeds).
# Each bar stacks the CPU time (dark base: the policy's measured CPU time per access, Table 6.6's
# run, times the requests) under the data access time (the simulator's virtual time until every
# I/O finished, deterministic). Black diamonds (10hf90, Tier 1 1 % / Tier 2 4 %): where each
# baseline's bar would be if ReStore's runtime reduction against it were the thesis's (5, 40, 23, 7
# and 13 %, T2011).
# Reads results/restore/fig_6_8.csv results/restore/table_6_6.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(3)
runs <- read_tidy(io$inputs[[1]])
overhead <- read_tidy(io$inputs[[2]])
reference <- read_tidy(io$inputs[[3]])

workloads <- unique(runs$workload)
d <- aggregate(cbind(data_access_us, requests) ~ workload + t1_pct + t2_pct + policy, runs, mean)
cpu_per_access <- tapply(overhead$overhead_us_per_access, overhead$policy, mean)
d$cpu_s <- d$requests * cpu_per_access[d$policy] / 1e6
d$data_s <- d$data_access_us / 1e6
d$total_s <- d$cpu_s + d$data_s
d$x <- restore_bar_x(factor(d$workload, levels = workloads), d$policy)
d$policy_label <- restore_policy_factor(d$policy)
d$tier1 <- tier1_factor(d$t1_pct)
d$tier2 <- tier2_factor(d$t2_pct)
half <- 0.8 / length(restore_policy_names) / 2

# The thesis's reductions: ReStore's runtime = (1 - r) x the baseline's, so the baseline's = ReStore's / (1 - r).
baselines <- c("tlfu", "tlru", "lrfu", "exd", "temp")
panel <- d[d$workload == "10hf90" & d$t1_pct == 1 & d$t2_pct == 4, ]
marks <- panel[panel$policy %in% baselines, ]
if (nrow(marks) > 0 && any(panel$policy == "restore")) {
  reduction <- vapply(marks$policy, function(p) {
    reference_value(reference, sprintf("restore_10hf90_t1_1_t2_4_runtime_reduction_vs_%s", p))
  }, numeric(1))
  marks$thesis_s <- panel$total_s[panel$policy == "restore"] / (1 - reduction / 100)
}

p <- ggplot(d) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = cpu_s, ymax = total_s, fill = policy_label)) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = 0, ymax = cpu_s), fill = "grey15") +
  facet_grid(tier1 ~ tier2) +
  scale_fill_restore_policy() +
  scale_x_continuous(breaks = seq_along(workloads), labels = workloads) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  guides(fill = guide_legend(nrow = 1)) +
  labs(x = NULL, y = "Runtime (s): CPU time + data access time",
       subtitle = paste0("dark base: measured CPU time in the policy; diamonds: the thesis's reductions\n",
                         "of ReStore (10hf90, 1 % / 4 %) applied to our ReStore bar")) +
  theme_thesis()
if (nrow(marks) > 0 && "thesis_s" %in% names(marks)) {
  p <- p + geom_point(data = marks, aes(x, thesis_s), shape = 18, size = 1.8, colour = "black")
}
save_figure(p, io$output, width = 6.5, height = 1.6 + 1.6 * length(unique(d$t1_pct)), title = "Thesis Figure 6.8")
