# Thesis Figure 2.1B (T430-436): gain of an application that batches writes, vs the
# number of concurrent I/Os, for several asymmetries (the PIO speedup S_PIO).
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
f_r <- unique(d$read_fraction)
p <- ggplot(d, aes(concurrent_ios, speedup, colour = factor(alpha))) +
  geom_line() + geom_point(size = 0.9) +
  scale_colour_alpha(d$alpha) +
  scale_x_continuous(breaks = seq(0, max(d$concurrent_ios), by = 2)) +
  labs(x = "#concurrent I/Os", y = "Gain (x)",
       subtitle = bquote("Batchable writes, " * f[r] == .(f_r))) +
  theme_thesis()
save_figure(p, io$output, width = 3.4, height = 2.8, title = "Thesis Figure 2.1B")
