"""TPC-C for pgbench (thesis Chapter 4: Figures 4.15 and 4.16), our own code.

    from ace import tpcc
    tpcc.load(server, warehouses=1, seed=1)            # schema, data, keys, functions
    args = tpcc.write_scripts(run_dir, "mix")          # or one of tpcc.TRANSACTIONS
    server.client(["pgbench", "-n", "-c", "2", "-T", "60", *args, *tpcc.pgbench_variables(1)])
    assert tpcc.consistency_violations(server) == []

The SQL lives in `systems/ace/workloads/tpcc/` (its README says what follows the TPC-C
specification and what does not): the tables, a loader written in SQL, the five
transactions as PL/pgSQL functions, and one pgbench script per transaction that draws the
transaction's inputs and calls its function. Pass `-n` to pgbench: there are no pgbench_*
tables to vacuum.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

TPCC_DIR = Path(__file__).resolve().parents[1] / "workloads" / "tpcc"
SCRIPTS_DIR = TPCC_DIR / "pgbench"

TRANSACTIONS = ("new_order", "payment", "order_status", "delivery", "stock_level")
STANDARD_MIX = {"new_order": 45, "payment": 43, "order_status": 4, "delivery": 4, "stock_level": 4}

# NURand's run-time constants C (clause 2.1.6), fixed so that pgbench scripts need no query to
# learn them; the loader picks C_LAST's load-time constant to be valid against this one. Any
# value in [0, A] is allowed (A = 255, 1023, 8191).
NURAND_C = {"c_last": 157, "c_id": 259, "ol_i_id": 7911}

# Rows per warehouse after a load (clause 4.3.3.1); ITEM has 100,000 rows whatever W is and
# ORDER-LINE 5-15 rows per order.
ROWS_PER_WAREHOUSE = {"warehouse": 1, "district": 10, "customer": 30_000, "history": 30_000,
                      "orders": 30_000, "new_order": 9_000, "stock": 100_000}
ITEMS = 100_000

TABLES = ("warehouse", "district", "customer", "history", "orders", "new_order", "order_line", "item", "stock")


def _identifier(name: str) -> str:
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise ValueError(f"database name {name!r}: use lower-case letters, digits and _")
    return name


def seed_fraction(seed: int) -> float:
    """PostgreSQL's setseed() takes a number in [-1, 1]: `seed` multiplied (mod 2^32) by an
    odd constant, so that neighbouring seeds give unrelated streams."""
    return ((seed * 2654435761) % 2**32) / 2**32


def load(server, warehouses: int, seed: int, database: str = "postgres") -> None:
    """Create the TPC-C tables and functions in `database` (created if missing), replacing
    any earlier ones, and fill them for `warehouses` warehouses. The same seed gives the same
    content. Ends with VACUUM ANALYZE and CHECKPOINT."""
    if not isinstance(warehouses, int) or warehouses < 1:
        raise ValueError(f"warehouses must be a positive integer, not {warehouses!r}")
    if not isinstance(seed, int) or not -2**63 <= seed < 2**63:
        raise ValueError(f"seed must be a 64-bit integer, not {seed!r}")
    if not server.sql(f"SELECT 1 FROM pg_database WHERE datname = '{_identifier(database)}'"):
        server.sql(f"CREATE DATABASE {database}")
    variables = {"warehouses": warehouses, "seed": seed, "seed_fraction": repr(seed_fraction(seed)),
                 **{f"nurand_{name}": c for name, c in NURAND_C.items()}}
    server.client(["psql", "-X", "-q", "-d", database, "-v", "ON_ERROR_STOP=1",
                   *(arg for name, value in variables.items() for arg in ("-v", f"{name}={value}")),
                   "-f", str(TPCC_DIR / "load.sql")])


def write_scripts(directory: Path, mix: str) -> list[str]:
    """Write the pgbench scripts of `mix` into `directory` and return pgbench's arguments
    for them: all five with the standard weights for "mix", else the one transaction."""
    if mix == "mix":
        names = list(TRANSACTIONS)
    elif mix in TRANSACTIONS:
        names = [mix]
    else:
        raise ValueError(f"mix {mix!r}: use 'mix' or one of {', '.join(TRANSACTIONS)}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    args = []
    for name in names:
        path = directory / f"{name}.sql"
        shutil.copyfile(SCRIPTS_DIR / f"{name}.sql", path)
        args += ["-f", f"{path.resolve()}@{STANDARD_MIX[name]}" if mix == "mix" else str(path.resolve())]
    return args


def pgbench_variables(warehouses: int) -> list[str]:
    """The -D arguments the scripts need: the number of warehouses and NURand's constants."""
    variables = {"warehouses": warehouses, **{f"nurand_{name}": c for name, c in NURAND_C.items()}}
    return [arg for name, value in variables.items() for arg in ("-D", f"{name}={value}")]


# TPC-C's consistency conditions 1-4 (clause 3.3.2.1-3.3.2.4); each query returns one line per
# violation.
CONSISTENCY_CHECKS = {
    1: """SELECT format('warehouse %s: W_YTD = %s but the sum of its D_YTD = %s', w_id, w_ytd, d.ytd)
          FROM warehouse LEFT JOIN (SELECT d_w_id, sum(d_ytd) AS ytd FROM district GROUP BY d_w_id) d
               ON d.d_w_id = w_id
          WHERE w_ytd IS DISTINCT FROM d.ytd ORDER BY w_id""",
    # When a district has no undelivered order left, max(NO_O_ID) does not exist: not checked.
    2: """SELECT format('district (%s, %s): D_NEXT_O_ID - 1 = %s, max(O_ID) = %s, max(NO_O_ID) = %s',
                        d_w_id, d_id, d_next_o_id - 1, o.max, n.max)
          FROM district
          LEFT JOIN (SELECT o_w_id, o_d_id, max(o_id) FROM orders GROUP BY 1, 2) o
               ON (o.o_w_id, o.o_d_id) = (d_w_id, d_id)
          LEFT JOIN (SELECT no_w_id, no_d_id, max(no_o_id) FROM new_order GROUP BY 1, 2) n
               ON (n.no_w_id, n.no_d_id) = (d_w_id, d_id)
          WHERE d_next_o_id - 1 IS DISTINCT FROM o.max OR d_next_o_id - 1 <> n.max
          ORDER BY d_w_id, d_id""",
    3: """SELECT format('district (%s, %s): max(NO_O_ID) - min(NO_O_ID) + 1 = %s but NEW-ORDER has %s rows',
                        no_w_id, no_d_id, max(no_o_id) - min(no_o_id) + 1, count(*))
          FROM new_order GROUP BY no_w_id, no_d_id
          HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*) ORDER BY no_w_id, no_d_id""",
    4: """SELECT format('district (%s, %s): sum(O_OL_CNT) = %s but ORDER-LINE has %s rows',
                        coalesce(o.o_w_id, l.ol_w_id), coalesce(o.o_d_id, l.ol_d_id), o.lines, l.lines)
          FROM (SELECT o_w_id, o_d_id, sum(o_ol_cnt) AS lines FROM orders GROUP BY 1, 2) o
          FULL JOIN (SELECT ol_w_id, ol_d_id, count(*) AS lines FROM order_line GROUP BY 1, 2) l
               ON (l.ol_w_id, l.ol_d_id) = (o.o_w_id, o.o_d_id)
          WHERE o.lines IS DISTINCT FROM l.lines
          ORDER BY coalesce(o.o_w_id, l.ol_w_id), coalesce(o.o_d_id, l.ol_d_id)""",
}


def consistency_violations(server, database: str = "postgres") -> list[str]:
    """TPC-C consistency conditions 1-4, checked in one statement (so in one snapshot): a
    description of each violation, or [] when the database is consistent."""
    query = " UNION ALL ".join(f"(SELECT 'condition {n}: ' || v FROM ({q}) AS c{n}(v))"
                               for n, q in CONSISTENCY_CHECKS.items())
    out = server.sql(query, _identifier(database))
    return [line for line in out.splitlines() if line]


def content_summary(server, database: str = "postgres") -> dict[str, str]:
    """Per table, its row count and an order-independent hash of its rows, with timestamps
    only as set or not (transactions write the clock's time): equal for equal content. For
    tests and small databases: it reads every row."""
    database = _identifier(database)
    columns = dict(line.split("|") for line in server.sql(
        "SELECT table_name, string_agg(CASE WHEN data_type LIKE 'timestamp%' THEN column_name || ' IS NULL' "
        "ELSE column_name END, ', ' ORDER BY ordinal_position) FROM information_schema.columns "
        f"WHERE table_schema = current_schema AND table_name IN ({', '.join(map(repr, TABLES))}) "
        "GROUP BY table_name", database).splitlines())
    out = server.sql(" UNION ALL ".join(
        f"SELECT '{table}', count(*) || ' rows, hash ' || coalesce(sum(hashtext(ROW({columns[table]})::text)), 0) "
        f"FROM {table}" for table in TABLES), database)
    return dict(line.split("|", 1) for line in out.splitlines())


def pgbench_summary(output: str) -> dict:
    """The totals of pgbench's report (its standard output): transactions processed (and
    expected), failed, tps, and per script (named by file stem) the transactions it ran."""
    def number(pattern, cast=int):
        found = re.search(pattern, output, re.MULTILINE)
        return cast(found.group(1)) if found else None
    processed = re.search(r"^number of transactions actually processed: (\d+)(?:/(\d+))?", output, re.MULTILINE)
    scripts = {}
    for name, count in re.findall(r"^SQL script \d+: (\S+)\n(?: - .*\n)*? - (\d+) transactions", output,
                                  re.MULTILINE):
        scripts[Path(name.split("@")[0]).stem] = int(count)
    return {
        "processed": int(processed.group(1)) if processed else None,
        "expected": int(processed.group(2)) if processed and processed.group(2) else None,
        "failed": number(r"^number of failed transactions: (\d+)"),
        "tps": number(r"^tps = ([\d.]+)", float),
        "scripts": scripts,
    }
