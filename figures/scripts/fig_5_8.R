# Thesis Figure 5.8 (T1562): "As we increase the number of concurrent I/Os, the benefit of PBFS
# increases until the device gets saturated." Runtime of blocked parallel BFS on the social graph
# (as FS) against the number of concurrent I/Os, one line per device; a device's dotted line is its
# k_r. Grey band: the thesis's SATA SSD saturates at 16-32 concurrent I/Os (its k_r is 25).
# Reads results/cave/fig_5_8.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])
band <- data.frame(low = reference_value(reference, "cave_sata_saturation_low"),
                   high = reference_value(reference, "cave_sata_saturation_high"),
                   bottom = min(d$runtime_s) / 1.5, top = max(d$runtime_s) * 1.5)  # a log axis has no 0
p <- plot_cave_concurrency(d, "runtime_s", "BFS runtime (s)")
p$layers <- c(geom_rect(data = band, aes(xmin = low, xmax = high, ymin = bottom, ymax = top), inherit.aes = FALSE,
                        fill = "grey85"), p$layers)  # under the lines
p <- p +
  scale_y_continuous(trans = "log10") +
  labs(subtitle = "grey: thesis's SATA SSD saturates at 16-32 concurrent I/Os")
save_figure(p, io$output, width = 4.8, height = 3.4, title = "Figure 5.8")
