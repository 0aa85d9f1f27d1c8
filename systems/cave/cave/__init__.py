"""CAVE (thesis Chapter 5): the out-of-core graph engine; the Python side builds and runs it.

    from cave import engine, reference, experiment
    binary = engine.build()                          # systems/cave/build/cave
    engine.generate(binary, "edges.txt", model="rmat", scale=16, seed=1)
    engine.convert(binary, "edges.txt", "g.cave", format="snap", undirected=True, renumber=True)
    print(engine.info(binary, "g.cave")["estimated_diameter"])
    row = engine.run(binary, graph="g.cave", algorithm="bfs", variant="blocked", io_threads=8, cache_fraction=0.03)

See systems/cave/README.md for the command line, the file format and every CSV column.
"""
