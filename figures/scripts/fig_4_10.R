# Thesis Figure 4.10 (T1028): "ACE improves runtime for devices with low asymmetry." Speedup of ACE
# (with prefetching) over each of the four policies, per workload; one panel per device (the thesis:
# A = SATA SSD, alpha 1.5; B = Virtual SSD, alpha 2.0). The grey band is the thesis's range of
# speedups on the device that the emulated device's preset models (none for other devices).
# Reads results/ace/fig_4_10.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

d <- d[d$variant == "ace_pf", ]
devices <- unique(d$device)
d$panel <- factor(d$device, levels = devices,
                  labels = sprintf("(%s) %s", LETTERS[seq_along(devices)],
                                   unique(device_label(d$device, d$device_alpha, d$device_k_w))))
d$policy_label <- policy_factor(d$policy)
d$workload <- factor(d$workload, levels = unique(d$workload))

ranges <- unique(d[, c("device", "device_preset", "panel")])
ranges$thesis <- thesis_device_of_preset(ranges$device_preset)
key <- c("SATA SSD" = "sata", "Virtual SSD" = "virtual", "PCIe SSD" = "pcie")[ranges$thesis]
ranges <- ranges[!is.na(key), ]
key <- key[!is.na(key)]
ranges$low <- vapply(key, function(k) reference_value(reference, sprintf("ace_%s_speedup_min", k)), numeric(1))
ranges$high <- vapply(key, function(k) reference_value(reference, sprintf("ace_%s_speedup_max", k)), numeric(1))

p <- ggplot(d, aes(workload, speedup, fill = policy_label)) +
  geom_rect(data = ranges, aes(xmin = -Inf, xmax = Inf, ymin = low, ymax = high), inherit.aes = FALSE,
            fill = "grey85") +
  geom_hline(yintercept = 1, colour = "grey40", linewidth = 0.3) +
  geom_col(position = position_dodge(width = 0.85), width = 0.8) +
  facet_wrap(~panel, nrow = 1) +
  scale_fill_manual(name = NULL, values = setNames(policy_colours, policy_names[names(policy_colours)])) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  labs(x = NULL, y = "Speedup of ACE over the baseline (x)",
       subtitle = "grey band: the thesis's range of speedups on the modelled device") +
  theme_thesis()
save_figure(p, io$output, width = 6.5, height = 3, title = "Thesis Figure 4.10")
