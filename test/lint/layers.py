#!/usr/bin/env python3
"""Checks the floors of the project's libraries (docs/architecture.md) on the built objects.

Reads each static library with `nm`: an undefined symbol of one member that another member
defines is a call (or a data reference) from the first file to the second. Fails, printing
the offending pair and the symbols, on
  - a cycle between the files of a library;
  - in a library with floors listed below, a call to a file that is not on a lower floor,
    or a file that is on no floor (a new file must be given its floor here);
  - a call from one library into another that it may not use.

usage: layers.py [--nm NM] NAME=ARCHIVE|OBJDIR ...   (NAME: a key of LIBS)
"""
import argparse
import os
import re
import subprocess
import sys

# Which libraries each library may use (besides itself): the project's floors, bottom up.
LIBS = {
    "common": [],
    "decode": ["common"],
    "decode_pt": ["decode", "common"],
    "pt_recorder": ["common"],
    "outputs": ["decode_pt", "decode", "common"],
    "bandwidth": ["decode", "common"],
    "runtime": [],  # libptcall.so: its own files (the common ones it compiles in are not checked)
    "db": ["common"],  # the runs database's storage layer: SQLite, libpq (loaded when
                       # first needed, common's ptc_dlib.c), libxxhash
    "web": ["db", "common"],  # the web views (server/, docs/web.md): the database,
                              # libmicrohttpd, and common/'s escaping of names (ptc_escape.c)
    "cov": ["common"],  # fuzzing-campaign coverage (docs/cov.md): the map reader, libelf
}

# Libraries whose symbols resolve only their own calls (see main)
ISOLATED = {"runtime"}

# Floors of the decoder core, bottom up: a file may call files of lower floors only.
FLOORS = {
    "decode": [
        ["errors.c", "reader.c"],                               # error texts, trace reader
        ["tables.c"],                                           # processes, threads, functions
        ["modules.c", "analyses.c", "stack.c", "par_policy.c",  # modules, queries, stacks
         "window.c"],                                           # windows (attach, snapshots)
        ["fork.c", "soft_fast.c",                               # thread feed, fork points
         "budget.c",                                            # budgets (MODULE_COUNTED, BUDGET)
         "blocking.c"],                                         # blocking calls (MODULE_BLOCKING)
        ["session.c", "soft.c"],                                # sessions, soft front-end
        ["chunk.c"],                                            # chunk dispatch
        ["file.c"],                                             # the file driver
        ["par.c",                                               # the parallel driver
         "tl_index.c"],                                         # the timeline's index
        ["tl_window.c"],                                        # timeline windows
        ["tl_call.c"],                                          # a timeline's single calls
    ],
    # libptcall.so (docs/runtime.md, Files): start-up and exit sit in soft_lifecycle.c, under
    # registration only; the state at the bottom calls nothing
    "runtime": [
        ["soft_state.c", "soft_object.c"],                      # the state, CPU save area,
                                                                # a loaded object's segments
        ["soft_clock.c"],                                       # the ticker's clock word
        ["soft_ring_buf.c"],                                    # the flight recorder's rings
        ["soft_fd.c", "soft_thread.c"],                         # trace descriptor, threads
        ["soft_handler.S", "soft_write.c", "soft_names.c",      # handlers, the trace file,
         "soft_blocking_emit.S"],                               # thread names, blocking
                                                                # calls' records
        ["soft_ring_writer.c"],                                 # the snapshot writer thread
        ["soft_mixed_config.c"],                                # count-rest, trace set
        ["soft_pilot_config.c"],                                # a budget's settings
        ["soft_ticker.c"],                                      # the ticker thread
        ["soft_config.c", "soft_select.c", "soft_drain.c",      # environment, selection,
         "soft_timebase.c", "soft_tramp.c"],                    # drain, time, trampolines
        ["soft_resume.c", "soft_sites.c", "soft_counts.c"],     # signal resume, call sites,
                                                                # counting mode
        ["soft_fastpath.c", "soft_flush.c", "soft_ring.c",      # generated handler, flushes,
         "soft_mixed.c"],                                       # flight recorder snapshots,
                                                                # counted beside tracing
        ["soft_signal.c", "soft_mark.c", "soft_spawn.c",        # signal handlers, marks,
         "soft_trigger.c", "soft_sanitizer.c",                  # posix_spawn, --trigger,
         "soft_blocking.c"],                                    # sanitizers, blocking calls
        ["soft_lifecycle.c"],                                   # start-up, fork, exec, exit
        ["soft_register.c", "soft_forkserver.c"],               # object registration,
                                                                # pre-main point, fork server
        ["soft_afl.c", "soft_fuzz_input.c",                     # ptcall-cc's AFL++ macros,
         "soft_attach.c", "soft_governor.c"],                   # the harness's entry hook;
                                                                # attach and detach; a
                                                                # budget's governor
        ["soft_ctl.c", "soft_pilot.c"],                         # the attach control channel,
                                                                # a budget's pilot
    ],
    # coverage of fuzzing corpora (cov/cov.h): data and maps under inputs and files, the
    # counters under the runner, analyses over all of it, views on top
    "cov": [
        ["cov_data.c", "cov_graph.c"],                          # the data set, its call graph
        ["cov_map.c", "cov_corpus.c", "cov_file.c",             # ELF maps, corpora, .ptcov,
         "cov_counts.c", "cov_uplot.c",                         # counters, embedded uPlot,
         "cov_hash.c", "cov_merge.c"],                          # input hashes, merging
        ["cov_afl.c", "cov_fsrv.c", "cov_shape.c"],             # AFL++ dirs, running,
                                                                # harness shapes
        ["cov_blocks.c", "cov_watch_dirs.c"],                   # blocks and lines; --watch's
                                                                # entries and directories
        ["cov_reach.c"],                                        # reachability, the frontier
        ["cov_analysis.c", "cov_watch_file.c"],                 # union, firsts, curve, diff;
                                                                # --watch's .ptcov, record 11
        ["cov_view_blocks.c", "cov_view_source.c",              # blocks parts of the views;
         "cov_view_reach.c", "cov_watch.c"],                    # reachability's; --watch loop
        ["cov_view_table.c", "cov_view_csv.c", "cov_view_json.c",   # views
         "cov_view_html.c", "cov_view_diff.c", "cov_view_lcov.c"],
    ],
    # the runs database (docs/db.md): backends under the connection, the schema over it,
    # ingest and queries on top
    "db": [
        ["db_pg_lib.c"],                                        # libpq, loaded when needed
        ["db_sqlite.c", "db_pg.c", "db_hash.c", "db_stats.c"],  # backends, content hash,
                                                                # campaign statistics
        ["db_graph_pick.c"],                                    # a call graph's nodes (pure)
        ["db_conn.c"],                                          # URLs, transactions, rows
        ["db_schema.c"],                                        # versions, migrations, open
        ["db_campaign_frontier.c"],                             # a campaign part's frontier
        ["db_ingest.c", "db_query.c", "db_campaign.c"],         # storing and reading runs,
                                                                # storing campaigns
        ["db_campaign_query.c"],                                # reading campaigns
    ],
    # the web views (docs/web.md): buffers, queries and files under the API's shared parts,
    # one file per API view over them, the router, and the HTTP server on top
    "web": [
        ["sbuf.c", "db_query_web.c", "web_cache.c", "web_static.c",   # escaping, queries,
         "web_conns.c", "web_mhd.c"],                           # the connection guard,
                                                                # libmicrohttpd loaded
        ["web_common.c", "web_json.c", "web_page.c"],           # arguments, JSON, HTML shells
        ["api_runs.c", "api_run.c", "api_hot.c", "api_function.c", "api_diff.c",  # views
         "api_campaign.c",
         "web_page_campaign.c",
         "api_callgraph.c"],                                    # the campaign pages' paths; the run's call graph
        ["api_threads.c"],                                      # a run's threads (its trace)
        ["api_campaign_compare.c",                              # campaigns compared
         "api_timeline.c"],                                     # a run's timeline
        ["web_api.c"],                                          # the router, pages' objects
        ["web_http.c"],                                         # libmicrohttpd
    ],
}

DEFINED = set("TDBRCVGSi")  # text, data, bss, read-only, common, weak object, small data
UNDEFINED = set("Uw")       # undefined, weak undefined


def read_archive(nm, path):
    """{member: (defined symbols, undefined symbols)} of a static library, or of the object
    files directly in a directory (a shared library's CMake object directory)."""
    if os.path.isdir(path):
        objs = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".o"))
        out = ""
        for o in objs:
            lines = subprocess.run([nm, "-P", o], check=True, capture_output=True,
                                   text=True).stdout
            out += "".join("x[%s]: %s\n" % (os.path.basename(o), l) for l in lines.splitlines())
    else:
        out = subprocess.run([nm, "-A", "-P", path], check=True, capture_output=True,
                             text=True).stdout
    members = {}
    pat = re.compile(r"^.*\[(?P<m>[^\]]+)\]: (?P<sym>\S+) (?P<t>\S)")
    for line in out.splitlines():
        m = pat.match(line)
        if not m:
            continue
        member = re.sub(r"\.o(bj)?$", "", m.group("m"))
        d, u = members.setdefault(member, (set(), set()))
        t = m.group("t")
        if t in DEFINED or (t == "W"):
            d.add(m.group("sym"))
        elif t in UNDEFINED:
            u.add(m.group("sym"))
    return members


def find_cycle(nodes, edges):
    """A cycle of the graph as a list of nodes (first == last), or None."""
    state = {n: 0 for n in nodes}  # 0 new, 1 on the path, 2 done
    path = []

    def visit(n):
        state[n] = 1
        path.append(n)
        for m in sorted(edges.get(n, {})):
            if state[m] == 1:
                return path[path.index(m):] + [m]
            if state[m] == 0:
                c = visit(m)
                if c:
                    return c
        path.pop()
        state[n] = 2
        return None

    for n in sorted(nodes):
        if state[n] == 0:
            c = visit(n)
            if c:
                return c
    return None


def levels(nodes, edges):
    """The lowest floor each node can stand on (the graph has no cycle)."""
    memo = {}

    def level(n):
        if n not in memo:
            memo[n] = 1 + max((level(m) for m in edges.get(n, {})), default=-1)
        return memo[n]

    return {n: level(n) for n in nodes}


# Members that define the C library's names only to forward them: a call from the library
# itself goes straight to the C library (soft_blocking.c tests its caller's address), so the
# runtime's own read/nanosleep/pthread_mutex_lock are not calls into them.
FORWARDERS = {"runtime": {"soft_blocking.c"}}


def short(syms, k=4):
    s = sorted(syms)
    return ", ".join(s[:k]) + (", ..." if len(s) > k else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("libs", nargs="+", metavar="NAME=ARCHIVE")
    a = ap.parse_args()
    libs = {}
    for spec in a.libs:
        name, _, path = spec.partition("=")
        if name not in LIBS:
            sys.exit("layers.py: unknown library %r (known: %s)" % (name, ", ".join(LIBS)))
        libs[name] = read_archive(a.nm, path)
    # symbol -> (library, member) defining it. The runtime is a shared library nothing links
    # against, and it defines libc's names (close, fork, ...) to interpose them: its symbols
    # resolve only its own calls.
    owner = {}
    for lib, members in libs.items():
        if lib in ISOLATED:
            continue
        for member, (d, _) in members.items():
            for s in d:
                owner.setdefault(s, (lib, member))
    bad = []
    for lib, members in sorted(libs.items()):
        resolve = owner
        if lib in ISOLATED:
            resolve = {s: (lib, m) for m, (d, _) in members.items() for s in d}
        edges = {}  # member -> {callee member: symbols}
        for member, (_, u) in members.items():
            for s in u:
                if s not in resolve:
                    continue  # libc, libipt, ...
                olib, omember = resolve[s]
                if olib == lib and omember in FORWARDERS.get(lib, ()):
                    continue
                if olib == lib:
                    if omember != member:
                        edges.setdefault(member, {}).setdefault(omember, set()).add(s)
                elif olib not in LIBS[lib]:
                    bad.append("%s: %s calls %s's %s (%s), which %s may not use"
                               % (lib, member, olib, omember, s, lib))
        cycle = find_cycle(members, edges)
        if cycle:
            steps = ["%s -> %s (%s)" % (x, y, short(edges[x][y]))
                     for x, y in zip(cycle, cycle[1:])]
            bad.append("%s: cycle: %s" % (lib, "; ".join(steps)))
            continue
        if lib in FLOORS:
            floor = {f: i for i, fl in enumerate(FLOORS[lib]) for f in fl}
            for member in sorted(members):
                if member not in floor:
                    bad.append("%s: %s is on no floor: add it to FLOORS in %s"
                               % (lib, member, os.path.basename(__file__)))
            for f in sorted(floor):
                if f not in members:
                    bad.append("%s: %s is listed in FLOORS but not built" % (lib, f))
            for x in sorted(edges):
                for y in sorted(edges[x]):
                    if x in floor and y in floor and floor[y] >= floor[x]:
                        bad.append("%s: %s (floor %d) calls %s (floor %d): %s"
                                   % (lib, x, floor[x], y, floor[y], short(edges[x][y])))
            shown = [[f for f in fl if f in members] for fl in FLOORS[lib]]
        else:
            lv = levels(members, edges)
            shown = [sorted(m for m in members if lv[m] == i)
                     for i in range(max(lv.values(), default=-1) + 1)]
        print("%s:" % lib)
        for i, fl in enumerate(shown):
            print("  floor %d: %s" % (i, " ".join(fl)))
    for b in bad:
        print("FAIL: " + b)
    if bad:
        return 1
    print("layers: ok (%s)" % ", ".join(sorted(libs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
