# Thesis Figure 3.4 (T650-656): speedup S''_PIO of an application that batches reads and
# writes, over concurrent read I/Os (k_r) x concurrent write I/Os (k_w), one panel per f_r.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
d$panel_label <- label_read_fraction_panels(d)
alpha <- unique(d$alpha)
p <- ggplot(d, aes(factor(k_r), factor(k_w), fill = speedup)) +
  geom_tile(colour = "white", linewidth = 0.3) +
  geom_text(aes(label = formatC(speedup, format = "f", digits = 1)), size = 1.9) +
  facet_wrap(~panel_label, ncol = 3, labeller = label_parsed) +
  scale_fill_gradient(name = "Speedup (x)", low = "#fff5eb", high = "#d94801", trans = "log2",
                      breaks = c(1, 2, 4, 8, 16, 32)) +
  labs(x = "#concurrent read I/Os (k_r)", y = "#concurrent write I/Os (k_w)",
       subtitle = bquote(alpha == .(alpha))) +
  theme_thesis() + theme(panel.grid = element_blank(), legend.position = "right")
save_figure(p, io$output, width = 6.5, height = 4.6, title = "Thesis Figure 3.4")
