# Thesis Figure 4.14 (T1063): "(A) Spectrum of (alpha, n_w) - as we move towards higher asymmetry,
# ACE has higher gain. (B) Empirical evidence showing that devices with higher asymmetry has
# higher gain for ACE." (A) the ideal speedup of ACE-LRU (no prefetching) over LRU for an emulated
# device with k_w = 8, MS, in the bufferpool simulator's virtual time, over alpha and n_w;
# (B) PostgreSQL: the speedup of ACE-LRU-WSR over LRU-WSR as the read share grows, one line per
# device (n_w = the device's k_w, pool 6 %). Black diamonds: the thesis's write-only speedups on
# the device each emulated preset models (1.33x Optane to 1.63x PCIe).
# Reads results/ace/sim/fig_4_14a.csv results/ace/fig_4_14b.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(3)
a <- read_tidy(io$inputs[[1]])
b <- read_tidy(io$inputs[[2]])
reference <- read_tidy(io$inputs[[3]])

panel_a <- ggplot(a, aes(factor(n_w), factor(alpha), fill = speedup)) +
  geom_tile() +
  geom_text(aes(label = sprintf("%.1f", speedup)), size = 1.7) +
  scale_fill_gradient(name = "speedup (x)", low = "#fff5eb", high = "#d94801") +
  labs(x = expression(n[w] ~ "(pages written at once; " * k[w] == 8 * ")"), y = expression(alpha),
       title = expression("(A) ideal speedup over (" * alpha * ", " * n[w] * "), simulated")) +
  theme_thesis() +
  theme(legend.position = "right", panel.grid = element_blank())

b <- b[b$variant != "baseline", ]
b <- b[order(b$device_alpha), ]
b$device_label <- factor(b$device, levels = unique(b$device),
                         labels = unique(device_label(b$device, b$device_alpha, b$device_k_w)))
key <- c("PCIe SSD" = "pcie", "Virtual SSD" = "virtual", "SATA SSD" = "sata", "Optane SSD" = "optane")
thesis <- unique(b[, c("device", "device_preset", "device_label")])
thesis$key <- key[thesis_device_of_preset(thesis$device_preset)]
thesis <- thesis[!is.na(thesis$key), ]
thesis$speedup <- vapply(thesis$key, function(k) reference_value(reference, sprintf("ace_write_only_speedup_%s", k)),
                         numeric(1))
thesis$read_pct <- rep(0, nrow(thesis))
panel_b <- ggplot(b, aes(read_pct, speedup, colour = device_label)) +
  geom_hline(yintercept = 1, colour = "grey70", linewidth = 0.3) +
  geom_line() + geom_point(size = 0.9) +
  geom_point(data = thesis, shape = 18, size = 2.4) +
  scale_x_continuous(breaks = seq(0, 100, 25), labels = function(x) sprintf("%d/%d", x, 100 - x)) +
  guides(colour = guide_legend(ncol = 1)) +
  labs(x = "read/write ratio (%)", y = "Speedup of ACE-LRU-WSR (x)", colour = NULL,
       title = "(B) PostgreSQL on each device; diamond: the thesis") +
  theme_thesis() +
  theme(legend.position = "right")

# The two panels share nothing but the page: stacked grobs, left edges aligned.
for (panel in list(panel_a, panel_b)) check_legend_fits(panel, width = 6.5, height = 3.2)
save_figure(rbind(ggplotGrob(panel_a), ggplotGrob(panel_b), size = "max"), io$output, width = 6.5, height = 6.4,
            title = "Thesis Figure 4.14")
