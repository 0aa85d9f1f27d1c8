# Thesis Figure 4.9 (T1023): "ACE causes very small increase in total number of writes." Logical
# writes (LW: pages PostgreSQL wrote) and physical writes (PW: pages the device wrote) of LRU-WSR
# and ACE-LRU-WSR (with prefetching, as the thesis's footnote to Table 4.3) on the synthetic
# workloads, with ACE's speedup; from Figure 4.8's runs (the thesis ran them 30 minutes). Above each
# ACE bar the change against the baseline (Table 4.3's: end-of-run owed writes included); the
# dashed line is the thesis's largest speedup. PW is not measured on a device without counters.
# Reads results/ace/fig_4_8.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

workloads <- synthetic_workloads
d <- d[d$policy == "lru_wsr" & d$variant %in% c("baseline", "ace_pf") & d$workload %in% workloads, ]
if (nrow(d) == 0) stop("results/ace/fig_4_8.csv has no LRU-WSR baseline or ACE (with prefetching) rows")
devices <- unique(d$device)
d$device_label <- factor(d$device, levels = devices,
                         labels = unique(device_label(d$device, d$device_alpha, d$device_k_w)))
d$workload <- factor(d$workload, levels = workloads)
d$system <- ifelse(d$variant == "baseline", "LRU-WSR", "ACE-LRU-WSR")

# As Table 4.3 counts them: the pages written during the run plus the change in dirty pages left
# in the pool (owed_writes), so that a short run's end state does not hide or add writes.
owed_change <- d$owed_writes - d$logical_writes
writes_panel <- "(A) writes, owed ones included (thousands of pages)"
speedup_panel <- "(B) speedup of ACE-LRU-WSR (x)"
change <- function(x) ifelse(d$variant == "baseline" | is.na(x), "", sprintf("%+.2f%%", x))
long <- rbind(
  data.frame(d[, c("device_label", "workload")], panel = writes_panel, series = paste("LW", d$system),
             value = d$owed_writes / 1000, label = change(d$delta_logical_writes_pct)),
  data.frame(d[, c("device_label", "workload")], panel = writes_panel, series = paste("PW", d$system),
             value = (d$device_written_pages + owed_change) / 1000, label = change(d$delta_device_writes_pct)),
  data.frame(d[d$variant != "baseline", c("device_label", "workload")], panel = speedup_panel,
             series = "speedup", value = d$speedup[d$variant != "baseline"], label = ""))
long <- long[!is.na(long$value), ]
long$series <- factor(long$series, levels = c("LW LRU-WSR", "LW ACE-LRU-WSR", "PW LRU-WSR", "PW ACE-LRU-WSR",
                                              "speedup"))
thesis <- data.frame(panel = speedup_panel, value = reference_value(reference, "ace_fig4_9_speedup_max"))
pw_low <- reference_value(reference, "ace_pw_over_lw_min")
pw_high <- reference_value(reference, "ace_pw_over_lw_max")

dodge <- position_dodge(width = 0.85)
p <- ggplot(long, aes(workload, value, fill = series)) +
  geom_col(position = dodge, width = 0.8) +
  geom_text(aes(label = label), position = dodge, vjust = -0.3, size = 1.7) +
  geom_hline(data = thesis, aes(yintercept = value), linetype = "dashed") +
  facet_grid(device_label ~ panel, scales = "free_y") +
  scale_fill_manual(name = NULL, values = c("LW LRU-WSR" = "grey75", "LW ACE-LRU-WSR" = "#fc8d59",
                                            "PW LRU-WSR" = "grey40", "PW ACE-LRU-WSR" = "#b2182b",
                                            speedup = "#4575b4"), drop = TRUE) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.15))) +
  labs(x = NULL, y = NULL,
       subtitle = sprintf(paste("label: ACE's change in writes; dashed: the thesis's largest speedup; the thesis's",
                                "PW are %g-%gx its LW (flash garbage collection, which an emulated SSD does not have)"),
                          pw_low, pw_high)) +
  theme_thesis() +
  theme(plot.subtitle = element_text(size = 6.5))
save_figure(p, io$output, width = 7.5, height = 1.2 + 2 * length(devices), title = "Thesis Figure 4.9")
