# Thesis Figure 6.7 (T1996): "Distribution of page access frequencies in standard benchmarks and
# real-world workload traces." For each trace, how many pages were requested how many times (log-log;
# the thesis gives no axes). YCSB is always there (YCSB's scrambled zipfian, theta 0.99, generated at
# the profile's size); the thesis's TPC-C, TPC-E and Thesios traces appear when configured
# (configs/experiments/restore.yaml, key traces).
# Reads results/restore/fig_6_7.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
names <- c(ycsb = "YCSB", tpcc = "TPC-C", tpce = "TPC-E", thesios = "Thesios")
traces <- unique(d$trace)
d$trace_label <- factor(d$trace, levels = traces,
                        labels = ifelse(traces %in% names(names), names[traces], traces))

p <- ggplot(d, aes(access_count, pages)) +
  geom_point(size = 0.7, colour = "#4575b4") +
  facet_wrap(~trace_label, scales = "free") +
  scale_x_log10() + scale_y_log10() +
  labs(x = "accesses to a page", y = "pages") +
  theme_thesis()
save_figure(p, io$output, width = 2.2 + 2.4 * min(length(traces), 3), height = 2.8 * ceiling(length(traces) / 3),
            title = "Thesis Figure 6.7")
