"""Trace converters on tiny hand-made traces, and trace statistics."""

from __future__ import annotations

import pytest

from restore import traces
from restore.engine import run


def test_postgres_trace_maps_relation_blocks_to_dense_pages(tmp_path):
    src = tmp_path / "pg.trace"
    src.write_text("\n".join([
        "101,1663,5,16384,main,0,R",
        "101,1663,5,16384,main,1,R",
        "102,1663,5,16384,main,0,W",      # same page as line 1
        "102,1663,5,16385,main,0,R",      # another relation
        "103,1663,5,16384,fsm,0,R",       # another fork of the first relation
        "101,1663,5,16384,main,1,W",
    ]) + "\n")
    stats = traces.convert_postgres(src, tmp_path / "pg.csv")
    assert (tmp_path / "pg.csv").read_text().splitlines() == [
        "page,op", "0,R", "1,R", "0,W", "2,R", "3,R", "1,W"]
    assert stats == {"trace": "pg.csv", "unique_pages": 4, "operations": 6, "reads": 4, "writes": 2,
                     "read_pct": pytest.approx(100 * 4 / 6)}


def test_postgres_trace_errors_name_the_line(tmp_path):
    src = tmp_path / "bad.trace"
    src.write_text("101,1663,5,16384,main,0,R\n101,1663,5,16384,main,0,X\n")
    with pytest.raises(traces.TraceFormatError, match="bad.trace:2"):
        traces.convert_postgres(src, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


def test_snia_msr_requests_split_into_4k_pages(tmp_path):
    src = tmp_path / "hm_1.csv"
    src.write_text("\n".join([
        "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
        "128166372003061629,hm,1,Read,8192,8192,100",     # pages 2, 3
        "128166372003061630,hm,1,Write,12288,4096,50",    # page 3
        "128166372003061631,hm,1,Read,4095,2,50",         # bytes 4095-4096: pages 0 and 1
        "128166372003061632,hm,0,Read,8192,512,50",       # disk 0 page 2: a different page
    ]) + "\n")
    stats = traces.convert_snia(src, tmp_path / "hm.csv")
    lines = (tmp_path / "hm.csv").read_text().splitlines()
    assert lines[0] == "page,op,timestamp"
    assert [tuple(line.split(",")[:2]) for line in lines[1:]] == [
        ("0", "R"), ("1", "R"), ("1", "W"), ("2", "R"), ("3", "R"), ("4", "R")]
    assert stats["unique_pages"] == 5 and stats["operations"] == 6 and stats["writes"] == 1


def test_thesios_by_header_names(tmp_path):
    src = tmp_path / "thesios.csv"
    src.write_text("\n".join([
        "filename,file_offset,application,op_type,request_io_size_bytes,start_time",
        "/f/a,0,bigtable,READ,16384,10",      # 4 pages
        "/f/b,0,bigtable,WRITE,4096,11",      # another file
        "/f/a,4096,bigtable,WRITE,100,12",    # page 1 of /f/a again
    ]) + "\n")
    stats = traces.convert_thesios(src, tmp_path / "t.csv")
    ops = [tuple(line.split(",")[:2]) for line in (tmp_path / "t.csv").read_text().splitlines()[1:]]
    assert ops == [("0", "R"), ("1", "R"), ("2", "R"), ("3", "R"), ("4", "W"), ("1", "W")]
    assert stats["unique_pages"] == 5
    bad = tmp_path / "bad.csv"
    bad.write_text("offset,size\n1,2\n")
    with pytest.raises(traces.TraceFormatError, match="needs the columns"):
        traces.convert_thesios(bad, tmp_path / "x.csv")


def test_statistics_and_frequency_distribution(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("page,op\n0,R\n0,W\n0,R\n1,R\n2,W\n2,R\n")
    assert traces.trace_stats(path) == {"trace": "t.csv", "unique_pages": 3, "operations": 6, "reads": 4,
                                        "writes": 2, "read_pct": pytest.approx(400 / 6)}
    assert traces.frequency_distribution(path) == [
        {"trace": "t.csv", "access_count": 1, "pages": 1},
        {"trace": "t.csv", "access_count": 2, "pages": 1},
        {"trace": "t.csv", "access_count": 3, "pages": 1}]


def test_converted_trace_runs_in_the_simulator(binary, tmp_path):
    src = tmp_path / "pg.trace"
    src.write_text("".join(f"1,1663,5,16384,main,{b % 40},{'W' if b % 3 == 0 else 'R'}\n" for b in range(400)))
    traces.convert_postgres(src, tmp_path / "pg.csv")
    rows = run(binary, trace=tmp_path / "pg.csv", policy="static:tlfu:restore", capacity_pct=[10, 20, 100])
    assert [r["requests"] for r in rows] == [400] * 3
    assert rows[0]["pages"] == 40 and rows[0]["workload"] == "pg.csv"
    assert rows[0]["read_pct"] == pytest.approx(100 * 266 / 400)


@pytest.mark.parametrize("text, line", [
    ("-1,R\n0,R\n", 1),                 # not a header: a page that is not a whole number
    ("Page,Op\n0,R\n", 1),              # a header only by its exact names
    ("page,op\n0,R,5,junk\n", 2),       # no field after the timestamp
    ("page,op\n0,X\n", 2),
    ("0,R\npage,op\n", 2),              # a header only first
])
def test_a_page_trace_line_that_is_not_a_request_is_an_error_naming_it(tmp_path, text, line):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(traces.TraceFormatError, match=f"t.csv:{line}: expected page,op"):
        list(traces.read_page_trace(path))


def test_a_page_trace_may_start_with_comments_and_its_header(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("# made by hand\npage,op,timestamp\n3,w,17\n\n1,R,\n")
    assert list(traces.read_page_trace(path)) == [(3, "W"), (1, "R")]


def test_a_snia_header_is_known_by_its_names_and_a_bad_first_line_is_an_error(tmp_path):
    src = tmp_path / "hm_1.csv"
    src.write_text("Time,Host,Disk,Type,Offset,Size\n128166372003061629,hm,1,Read,8192,8192\n")
    with pytest.raises(traces.TraceFormatError, match="hm_1.csv:1: the request type must be Read or Write"):
        traces.convert_snia(src, tmp_path / "hm.csv")
