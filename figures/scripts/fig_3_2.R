# Thesis Figure 3.2 (T628-636): speedup of an Unbatchable Reads, Batchable Writes application under PIO, one panel per read
# fraction f_r, vs the number of concurrent write I/Os, one line per asymmetry.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
panels <- unique(d[, c("panel", "read_fraction")])
d$panel_label <- factor(d$panel, levels = panels$panel,
                        labels = sprintf("(%s)~~f[r] == %s", panels$panel, panels$read_fraction))
p <- ggplot(d, aes(k_w, speedup, colour = factor(alpha))) +
  geom_line() + geom_point(size = 0.7) +
  facet_wrap(~panel_label, nrow = 1, labeller = label_parsed) +
  scale_colour_alpha(d$alpha) +
  scale_x_continuous(breaks = seq(0, max(d$k_w), by = 4)) +
  labs(x = "#concurrent write I/Os (k_w)", y = "Speedup (x)") +
  theme_thesis()
save_figure(p, io$output, width = 6.5, height = 2.6, title = "Thesis Figure 3.2")
