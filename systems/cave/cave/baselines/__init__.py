"""The out-of-core graph systems Chapter 5 compares CAVE with (thesis Figures 5.1B, 5.7, 5.11, Table
5.2), built from pinned sources with the artifact's patches (`build`), fed the same graphs as CAVE
(`edges`), run by their own drivers (`graphchi`, `gridgraph`), and checked against the reference
answers (`answers`) before any of their times counts."""
