# Thesis Figure 6.4 (T1839): "Membership function representing the categories 'Large' and 'Small',
# the value of the function stands for how likely an input is 'Large' or 'Small'." The sigmoid
# mu_Large(x) = 1 / (1 + a exp(-b x)) with b = 10 / range(x) and a = exp(b x-bar) (T1847), and
# mu_Small = 1 - mu_Large, for two (x-bar, range) pairs; the thesis does not give its pairs'
# values, so ours are configs/experiments/restore.yaml's (fig_6_4.pairs).
# Reads results/restore/fig_6_4.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])

pairs <- unique(d[, c("pair", "xbar", "range", "a", "b")])
labels <- sprintf("x-bar = %s, range = %s (a = %s, b = %s)", sig_format(pairs$xbar, 2), sig_format(pairs$range, 2),
                  sig_format(pairs$a, 3), sig_format(pairs$b, 3))
d$pair_label <- factor(d$pair, levels = pairs$pair, labels = labels)

p <- ggplot(d, aes(x, membership, colour = category, linetype = pair_label)) +
  geom_hline(yintercept = 0.5, colour = "grey75", linewidth = 0.3) +
  geom_line() +
  scale_colour_manual(name = NULL, values = c(Large = "#d73027", Small = "#4575b4")) +
  scale_linetype_manual(name = NULL, values = c("solid", "dashed", "dotted", "dotdash")[seq_along(labels)]) +
  guides(linetype = guide_legend(ncol = 1)) +
  labs(x = "input x", y = "membership value") +
  theme_thesis()
save_figure(p, io$output, width = 4.5, height = 3.6, title = "Thesis Figure 6.4")
