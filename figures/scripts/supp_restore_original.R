# Supplementary figure (not in the thesis): the authors' released ReStore agent (Run_RL) against
# their own tLFU, TEMP and tLRU, and ours (restore-sim) on the same streams, tiers and capacities
# (issue 43, item 1). Each point is a policy's time until every request was served, divided by the
# same implementation's tLFU on the same stream (below 1: faster than tLFU); for theirs, which sleep
# in real time, the median of the repeats' ratios with their range as a bar; ours, in virtual time,
# runs once. Reads results/restore/original_summary.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(1)
d <- read_tidy(io$inputs[[1]])

implementations <- c(authors = "the authors' programs (real time)", artifact = "restore-sim (virtual time)")
d$implementation <- factor(implementations[d$implementation], levels = implementations)
d$policy_label <- restore_policy_factor(d$policy)
d$workload <- factor(d$workload, levels = unique(d$workload))
d$label <- sprintf("%.2f", d$vs_tlfu)
dodge <- position_dodge(width = 0.6)

p <- ggplot(d, aes(policy_label, vs_tlfu, colour = policy_label, shape = implementation, group = implementation)) +
  geom_hline(yintercept = 1, colour = "grey40", linetype = "dashed", linewidth = 0.3) +
  geom_linerange(aes(ymin = vs_tlfu_min, ymax = vs_tlfu_max), position = dodge, linewidth = 0.6) +
  geom_point(position = dodge, size = 2, fill = "white", stroke = 0.8) +
  geom_text(aes(label = label), position = dodge, vjust = -1.1, size = 2, show.legend = FALSE) +
  facet_wrap(~workload, nrow = 1) +
  scale_colour_restore_policy(guide = "none") +
  scale_shape_manual(name = NULL, values = c(16, 21)) +
  scale_y_log10(expand = expansion(mult = c(0.08, 0.15))) +
  labs(x = NULL, y = "time / the same implementation's tLFU") +
  theme_thesis(base_size = 8)
save_figure(p, io$output, width = 6.5, height = 3, title = "The authors' ReStore beside ours")
