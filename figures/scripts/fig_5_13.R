# Thesis Figure 5.13 (T1606-1612): "(A) Concurrent I/Os improve performance for CAVE's Random Walk
# till the device is saturated. (B) CAVE's PDFS can attain the maximum benefit of the device by
# exploiting its optimal concurrency." Runtime against the number of concurrent I/Os, one line per
# device: (A) random walks on the social graph (as LJ), (B) pseudo-DFS on it (as FS). Each line is
# labelled with its speedup over one I/O at a time; the thesis's PDFS speedups are in the subtitle.
# Reads results/cave/fig_5_13.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])
d$panel_label <- ifelse(d$panel == "a", "(A) random walk", "(B) pseudo-DFS")
best <- do.call(rbind, lapply(split(d, list(d$panel, d$device), drop = TRUE),
                              function(s) s[which.max(s$speedup_vs_first), ]))
best$label <- sprintf("%.1fx", best$speedup_vs_first)
best$device_label <- cave_device_label(best$device, best$device_k_r)
thesis <- sprintf("thesis PDFS speedups: Optane %.1fx, PCIe %.1fx, SATA %.1fx",
                  reference_value(reference, "cave_pdfs_fs_speedup_optane"),
                  reference_value(reference, "cave_pdfs_fs_speedup_pcie"),
                  reference_value(reference, "cave_pdfs_fs_speedup_sata"))
p <- plot_cave_concurrency(d, "runtime_s", "Runtime (s)") +
  geom_text(data = best, aes(io_threads, runtime_s, label = label, colour = device_label), vjust = -0.8, size = 2.5,
            show.legend = FALSE) +
  scale_y_continuous(trans = "log10") +
  facet_wrap(~panel_label, nrow = 1, scales = "free_y") +
  labs(subtitle = paste0("labels: best speedup over 1 concurrent I/O; ", thesis))
save_figure(p, io$output, width = 6.5, height = 3.4, title = "Figure 5.13")
