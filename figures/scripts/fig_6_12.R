# Thesis Figure 6.12 (T2035): "Normalized latency relative to Static of each policy as #pages and #operations
# increases for 5hf90 workload with 3% Tier 1 and 8% Tier 2 capacity. ReStore scales effectively with the
# data size." Each policy's data access time (virtual time, deterministic) over
# Static's in the same scale group, mean over seeds. Black diamonds: ReStore's 1.03 (10K pages, 1M
# operations) and 1.12 (10M pages, 100M operations) of the thesis (T2039), on the groups of that
# size when the profile runs them.
# Reads results/restore/fig_6_12.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
runs <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

count_label <- function(n) ifelse(n >= 1e6, paste0(n / 1e6, "M"), ifelse(n >= 1e3, paste0(n / 1e3, "K"), n))
d <- aggregate(normalized_data_access ~ group + pages + requests + policy, runs, mean)
groups <- unique(d[order(d$group), c("group", "pages", "requests")])
labels <- sprintf("%s pages\n%s requests", count_label(groups$pages), count_label(groups$requests))
d$x <- restore_bar_x(match(d$group, groups$group), d$policy)
d$policy_label <- restore_policy_factor(d$policy)
half <- 0.8 / length(restore_policy_names) / 2

thesis <- data.frame(pages = c(1e4, 1e7), requests = c(1e6, 1e8),
                     value = c(reference_value(reference, "restore_scale_norm_latency_first"),
                               reference_value(reference, "restore_scale_norm_latency_last")))
marks <- merge(d[d$policy == "restore", ], thesis, by = c("pages", "requests"))

p <- ggplot(d) +
  geom_hline(yintercept = 1, colour = "grey60", linewidth = 0.3) +
  geom_rect(aes(xmin = x - half, xmax = x + half, ymin = 0, ymax = normalized_data_access, fill = policy_label)) +
  scale_fill_restore_policy() +
  scale_x_continuous(breaks = seq_len(nrow(groups)), labels = labels) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  guides(fill = guide_legend(nrow = 1)) +
  labs(x = NULL, y = "Latency normalized to Static",
       subtitle = if (nrow(marks) > 0) "diamonds: ReStore's normalized latency in the thesis" else
         "the thesis's ReStore values (1.03 at 10K/1M, 1.12 at 10M/100M) are for groups this profile does not run") +
  theme_thesis()
if (nrow(marks) > 0) {
  p <- p + geom_point(data = marks, aes(x, value), shape = 18, size = 2, colour = "black")
}
save_figure(p, io$output, width = 6.5, height = 3.4, title = "Thesis Figure 6.12")
