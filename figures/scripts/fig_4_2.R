# Thesis Figure 4.2 (T775): "ACE outperforms state-of-the-art due to better device utilization."
# The ideal speedup of ACE (its Writer, no prefetching) over LRU as the read share grows, for the
# thesis's four devices (the alpha and k of their emussd presets, Table 4.1): the bufferpool
# simulator in virtual time, where only the device's time counts. The thesis does not give the
# figure's axes; it reports "up to 2.5x" for the highest asymmetry (dotted line).
# Reads results/ace/sim/fig_4_2.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

devices <- unique(d[order(d$alpha), c("device", "alpha", "k_w")])
labels <- sprintf("%s (alpha %s, k_w %d)", thesis_device_of_preset(devices$device), devices$alpha, devices$k_w)
d$device_label <- factor(d$device, levels = devices$device, labels = labels)
colours <- setNames(c("#1b9e77", "#7570b3", "#d95f02", "#e7298a")[seq_along(labels)], labels)

p <- ggplot(d, aes(read_pct, speedup, colour = device_label)) +
  geom_hline(yintercept = reference_value(reference, "ace_ideal_speedup_max"), linetype = "dotted",
             colour = "grey40") +
  geom_hline(yintercept = 1, colour = "grey70", linewidth = 0.3) +
  geom_line() + geom_point(size = 0.9) +
  scale_colour_manual(name = NULL, values = colours) +
  scale_x_continuous(breaks = seq(0, 100, 20), labels = function(x) sprintf("%d/%d", x, 100 - x)) +
  expand_limits(y = 1) +
  guides(colour = guide_legend(nrow = 2)) +
  labs(x = "read/write ratio (%)", y = "Ideal speedup of ACE over LRU (x)",
       subtitle = "dotted: the thesis's 'up to 2.5x'") +
  theme_thesis()
save_figure(p, io$output, width = 4.5, height = 3.4, title = "Thesis Figure 4.2")
