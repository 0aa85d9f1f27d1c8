"""ACE in PostgreSQL: building the patched server (build) and running it (server)."""
