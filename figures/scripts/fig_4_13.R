# Thesis Figure 4.13 (T1053): "Speedup increases as #I/Os are increased until device gets
# saturated." MS; speedup of ACE's Writer (no prefetching) over each policy's baseline as n_w, the
# pages written at once, grows; the dashed line is the device's k_w. Grey band: the thesis's
# 1.2-1.3x at n_w = 4 and 6 (its PCIe SSD has k_w = 8). One panel per device.
# Reads results/ace/fig_4_13.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

d <- d[d$variant != "baseline", ]
d$policy_label <- policy_factor(d$policy)
d$device_label <- device_label(d$device, d$device_alpha, d$device_k_w)
k_lines <- unique(d[, c("device_label", "device_k_w")])
band <- data.frame(low = reference_value(reference, "ace_speedup_n_w_4_6_min"),
                   high = reference_value(reference, "ace_speedup_n_w_4_6_max"))

p <- ggplot(d, aes(n_w, speedup, colour = policy_label)) +
  geom_rect(data = band, aes(xmin = 4, xmax = 6, ymin = low, ymax = high), inherit.aes = FALSE, fill = "grey85") +
  geom_hline(yintercept = 1, colour = "grey60", linewidth = 0.3) +
  geom_vline(data = k_lines, aes(xintercept = device_k_w), linetype = "dashed", colour = "grey40") +
  geom_line() + geom_point(size = 1) +
  facet_wrap(~device_label) +
  scale_colour_policy() +
  scale_x_continuous(trans = "log2", breaks = sort(unique(d$n_w))) +
  labs(x = expression(n[w] ~ "(#concurrent write I/Os)"), y = "Speedup of ACE (x)",
       subtitle = "dashed: the device's k_w; grey: the thesis's 1.2-1.3x at n_w = 4 and 6") +
  theme_thesis()
save_figure(p, io$output, width = 5, height = 3.2, title = "Thesis Figure 4.13")
