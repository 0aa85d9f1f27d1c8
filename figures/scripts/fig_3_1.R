# Thesis Figure 3.1 (T620-625): normalised cost per operation f_r + f_w * alpha of an
# application that can batch neither reads nor writes, vs the share of writes.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])
p <- ggplot(d, aes(100 * write_fraction, cost, colour = factor(alpha))) +
  geom_line() +
  scale_colour_alpha(d$alpha) +
  scale_x_continuous(breaks = seq(0, 100, by = 20),
                     labels = function(x) paste0(100 - x, "/", x)) +
  labs(x = "Read/write ratio (%)", y = "Normalized cost per operation") +
  theme_thesis()
save_figure(p, io$output, width = 3.4, height = 2.8, title = "Thesis Figure 3.1")
