# Thesis Figure 6.9 (T2018): "Number of page migrations, lighter colors are the number from Tier 2
# to Tier 1, darker colors are from Tier 3 to Tier 2. ReStore causes the least number of
# migrations." The runs of Figure 6.8 (mean over seeds): each bar stacks the promotions from Tier 2
# to Tier 1 (light, bottom) and from Tier 3 to Tier 2 (dark, top). Below the plot: for each baseline,
# the most migrations it makes relative to ReStore in one configuration (ours), beside the thesis's
# "up to" factors (T2015).
# Reads results/restore/fig_6_8.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
runs <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

workloads <- unique(runs$workload)
d <- aggregate(cbind(migrations_t2_t1, migrations_t3_t2) ~ workload + t1_pct + t2_pct + policy, runs, mean)
d$x <- restore_bar_x(factor(d$workload, levels = workloads), d$policy)
d$policy_label <- restore_policy_factor(d$policy)
d$tier1 <- tier1_factor(d$t1_pct)
d$tier2 <- tier2_factor(d$t2_pct)
d$low <- d$migrations_t2_t1 / 1e3
d$high <- (d$migrations_t2_t1 + d$migrations_t3_t2) / 1e3
half <- 0.8 / length(restore_policy_names) / 2

baselines <- c("tlfu", "tlru", "lrfu", "exd", "temp")
ours <- vapply(baselines, function(p) {
  v <- runs$restore_migration_reduction[runs$policy == p]
  if (all(is.na(v))) NA_real_ else max(v, na.rm = TRUE)
}, numeric(1))
thesis <- vapply(baselines, function(p) reference_value(reference, sprintf("restore_fewer_migrations_vs_%s", p)),
                 numeric(1))
factors <- paste(sprintf("%s %sx (thesis %sx)", restore_policy_names[baselines], sig_format(ours, 2),
                         sig_format(thesis, 2)), collapse = ", ")

p <- ggplot(d) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = low, ymax = high, fill = policy_label)) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = 0, ymax = low, fill = policy_label), alpha = 0.4) +
  facet_grid(tier1 ~ tier2) +
  scale_fill_restore_policy() +
  scale_x_continuous(breaks = seq_along(workloads), labels = workloads) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  guides(fill = guide_legend(nrow = 1)) +
  labs(x = NULL, y = "Page migrations (thousands)",
       subtitle = "light: Tier 2 to Tier 1; dark: Tier 3 to Tier 2",
       caption = paste(strwrap(paste0("Most migrations of each baseline / ReStore's in one configuration: ", factors),
                                 140), collapse = "\n")) +
  theme_thesis() +
  theme(plot.caption = element_text(hjust = 0, size = 6.5))
save_figure(p, io$output, width = 6.5, height = 1.6 + 1.6 * length(unique(d$t1_pct)), title = "Thesis Figure 6.9")
