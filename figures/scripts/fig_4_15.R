# Thesis Figure 4.15 (T1084): "ACE achieves high speedup for TPC-C mixed transaction, while
# benefiting the write-intensive transaction the most." Speedup of ACE (with prefetching) over each
# policy for TPC-C's standard mix and for each transaction run alone. Black diamonds: the thesis's
# speedups for the mix (1.29x, 1.27x, 1.30x, 1.32x) and for Delivery (1.51x, policy not stated:
# drawn at the group's centre). One panel per device.
# Reads results/ace/fig_4_15.csv results/reference/headline_numbers.csv.
script_dir <- dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))
source(file.path(script_dir, "theme.R"))
io <- figure_args(2)
d <- read_tidy(io$inputs[[1]])
reference <- read_tidy(io$inputs[[2]])

mixes <- c(mix = "Mix", new_order = "NewOrder", payment = "Payment", order_status = "OrderStatus",
           delivery = "Delivery", stock_level = "StockLevel")
d <- d[d$variant == "ace_pf", ]
d$mix_label <- factor(mixes[d$tpcc_mix], levels = mixes[mixes %in% mixes[d$tpcc_mix]])
d$policy_label <- droplevels(policy_factor(d$policy))
d$device_label <- device_label(d$device, d$device_alpha, d$device_k_w)

thesis <- data.frame(policy = names(policy_names), tpcc_mix = "mix",
                     speedup = vapply(sub("_", "", names(policy_names)),
                                      function(p) reference_value(reference, paste0("ace_tpcc_mix_speedup_", p)),
                                      numeric(1)))
thesis <- thesis[thesis$policy %in% d$policy, ]  # the thesis's speedup of each policy this run has
thesis$policy_label <- factor(policy_names[thesis$policy], levels = levels(d$policy_label))
thesis$mix_label <- factor(mixes[thesis$tpcc_mix], levels = levels(d$mix_label))
thesis <- merge(thesis, data.frame(device_label = unique(d$device_label)))
delivery <- merge(data.frame(mix_label = factor("Delivery", levels = levels(d$mix_label)),
                             speedup = reference_value(reference, "ace_tpcc_delivery_speedup")),
                  data.frame(device_label = unique(d$device_label)))
delivery <- delivery[!is.na(delivery$mix_label), ]

dodge <- position_dodge(width = 0.85)
p <- ggplot(d, aes(mix_label, speedup, fill = policy_label)) +
  geom_hline(yintercept = 1, colour = "grey40", linewidth = 0.3) +
  geom_col(position = dodge, width = 0.8) +
  geom_point(data = thesis, aes(mix_label, speedup, group = policy_label), position = dodge, shape = 18,
             size = 2, show.legend = FALSE) +
  geom_point(data = delivery, aes(mix_label, speedup), inherit.aes = FALSE, shape = 18, size = 2) +
  facet_wrap(~device_label, ncol = 1) +
  scale_fill_manual(name = NULL, values = setNames(policy_colours, policy_names[names(policy_colours)])) +
  scale_y_continuous(expand = expansion(mult = c(0, 0.05))) +
  labs(x = NULL, y = "Speedup of ACE over the baseline (x)", subtitle = "diamond: the thesis's speedup") +
  theme_thesis()
save_figure(p, io$output, width = 6.5, height = 1 + 2.3 * length(unique(d$device)), title = "Thesis Figure 4.15")
