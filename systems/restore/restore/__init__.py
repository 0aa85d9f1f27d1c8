"""ReStore (thesis Chapter 6): the tiered-storage simulator/emulator, its migration policies,
workloads, trace converters and the experiment driver (systems/restore/README.md).

    restore.engine      build() and run the restore-sim binary
    restore.traces      trace converters (PostgreSQL, Thesios, SNIA/MSR) and trace statistics
    restore.experiment  one function per thesis figure/table family, returning tidy rows
"""
