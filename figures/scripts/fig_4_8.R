# Thesis Figure 4.8 (T996): "ACE reduces total workload latency for all Clock Sweep, LRU, CFLRU,
# and LRU-WSR in the PCIe SSD." Runtime of the same measured work for each policy: baseline, ACE
# without prefetching, ACE (with prefetching); panels A-D = workloads MS, WIS, RIS, MU; one row of
# panels per device. Above each ACE bar its runtime reduction; a black diamond marks the runtime the
# thesis's reduction for that policy would give (MS and WIS, where the thesis gives one per policy).
# Reads results/ace/fig_4_8.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

workloads <- synthetic_workloads
d <- d[d$workload %in% workloads, ]
devices <- unique(d$device)
d$panel <- factor(d$workload, levels = workloads,
                  labels = sprintf("(%s) %s", LETTERS[seq_along(workloads)], workloads))
d$device_label <- factor(d$device, levels = devices,
                         labels = unique(device_label(d$device, d$device_alpha, d$device_k_w)))
d$policy_label <- policy_factor(d$policy)
d$variant_label <- factor(d$variant, levels = names(variant_names), labels = variant_names)
d$label <- ifelse(d$variant == "baseline", "", sprintf("%.0f%%", d$runtime_reduction_pct))

# The thesis's per-policy reductions: MS with and without prefetching, WIS with prefetching.
thesis <- expand.grid(policy = names(policy_names), workload = c("MS", "WIS"), variant = c("ace", "ace_pf"),
                      stringsAsFactors = FALSE)
thesis <- thesis[!(thesis$workload == "WIS" & thesis$variant == "ace"), ]
thesis$id <- sprintf("ace_%s_%s_runtime_reduction_%s", tolower(thesis$workload),
                     ifelse(thesis$variant == "ace_pf", "pf", "nopf"), sub("_", "", thesis$policy))
thesis$reduction <- vapply(thesis$id, function(id) reference_value(reference, id), numeric(1))
marks <- merge(d[d$variant != "baseline", ], thesis, by = c("policy", "workload", "variant"))
marks$thesis_runtime <- marks$baseline_runtime_s * (1 - marks$reduction / 100)

dodge <- position_dodge(width = 0.85)
p <- ggplot(d, aes(policy_label, runtime_s, fill = variant_label)) +
  geom_col(position = dodge, width = 0.8) +
  geom_text(aes(label = label), position = dodge, vjust = -0.3, size = 1.9) +
  geom_point(data = marks, aes(policy_label, thesis_runtime, group = variant_label), position = dodge,
             shape = 18, size = 1.6, colour = "black", show.legend = FALSE) +
  facet_grid(device_label ~ panel, scales = "free_y") +
  scale_fill_manual(name = NULL, values = c("grey70", "#fdb863", "#b2182b")) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.15))) +
  labs(x = NULL, y = "Runtime of the measured work (s)",
       subtitle = "label: runtime reduction of ACE; diamond: the thesis's reduction on its PCIe SSD") +
  theme_thesis() +
  theme(axis.text.x = element_text(angle = 30, hjust = 1))
save_figure(p, io$output, width = 7.5, height = 1.2 + 2 * length(devices), title = "Thesis Figure 4.8")
