-- The runs database as schema version 1 left it (db/db_schema.c, to_v1), with one run in
-- it: frozen. test/db/db_test.py loads this into an empty SQLite database and opens it
-- with the current ptcall, which must migrate it to the current version and keep the run.
-- Never edit this file; a new schema version adds v2.*.sql beside it.
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (1);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT NOT NULL UNIQUE, trace TEXT NOT NULL, trace_bytes BIGINT NOT NULL, program TEXT NOT NULL, program_path TEXT, command TEXT, host TEXT NOT NULL, added_ns BIGINT NOT NULL, start_ns BIGINT, duration_ns BIGINT, exit_status INTEGER, signal INTEGER, core_dumped INTEGER, backend TEXT NOT NULL, time_unit TEXT NOT NULL, events BIGINT NOT NULL, whole_calls BIGINT NOT NULL, calls BIGINT NOT NULL, threads BIGINT NOT NULL, processes BIGINT NOT NULL, gaps BIGINT NOT NULL, missing_chunks BIGINT NOT NULL, lost_events BIGINT NOT NULL, lost_pt_units BIGINT NOT NULL, repairs BIGINT NOT NULL, unwound BIGINT NOT NULL, unmatched BIGINT NOT NULL, broken_frames BIGINT NOT NULL, open_at_end BIGINT NOT NULL, bad_stubs BIGINT NOT NULL, fork_unknown BIGINT NOT NULL, lossy_threads BIGINT NOT NULL, unfinished_processes BIGINT NOT NULL, complete INTEGER NOT NULL, lossy INTEGER NOT NULL, total_time BIGINT, selection TEXT, traced_functions BIGINT, functions BIGINT NOT NULL, edges BIGINT NOT NULL);
CREATE INDEX runs_start ON runs (start_ns);
CREATE TABLE run_tags (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, name));
CREATE INDEX run_tags_name_value ON run_tags (name, value);
CREATE TABLE run_modules (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, idx INTEGER NOT NULL, path TEXT NOT NULL, identity TEXT NOT NULL, functions INTEGER NOT NULL, PRIMARY KEY (run_id, idx));
CREATE TABLE functions (id INTEGER PRIMARY KEY AUTOINCREMENT, module TEXT NOT NULL, linkage_name TEXT NOT NULL, file TEXT NOT NULL, name TEXT NOT NULL, line INTEGER NOT NULL, UNIQUE (module, linkage_name, file));
CREATE TABLE run_functions (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, function_id BIGINT NOT NULL REFERENCES functions (id), module_idx INTEGER NOT NULL, calls BIGINT NOT NULL, total BIGINT, self BIGINT, PRIMARY KEY (run_id, function_id));
CREATE INDEX run_functions_function ON run_functions (function_id);
CREATE TABLE run_edges (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, caller_id BIGINT NOT NULL REFERENCES functions (id), callee_id BIGINT NOT NULL REFERENCES functions (id), calls BIGINT NOT NULL, PRIMARY KEY (run_id, caller_id, callee_id));
INSERT INTO runs (id, content_hash, trace, trace_bytes, program, program_path, command, host, added_ns, start_ns, duration_ns, exit_status, signal, core_dumped, backend, time_unit, events, whole_calls, calls, threads, processes, gaps, missing_chunks, lost_events, lost_pt_units, repairs, unwound, unmatched, broken_frames, open_at_end, bad_stubs, fork_unknown, lossy_threads, unfinished_processes, complete, lossy, total_time, selection, traced_functions, functions, edges) VALUES (1, 'abababababababababababababababab', '/traces/v1.ptc', 4096, 'prog', '/bin/prog', './prog 7', 'v1host', 1700000000000000000, 1699999999000000000, 2500000, 0, NULL, NULL, 'soft', 'ns', 24, 0, 12, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9000, NULL, NULL, 2, 1);
INSERT INTO run_tags (run_id, name, value) VALUES (1, 'made', 'v1 fixture');
INSERT INTO run_modules (run_id, idx, path, identity, functions) VALUES (1, 0, '/bin/prog', '00000000000000ff', 2);
INSERT INTO functions (id, module, linkage_name, file, name, line) VALUES (1, 'prog', 'main', 'prog.c', 'main', 3);
INSERT INTO functions (id, module, linkage_name, file, name, line) VALUES (2, 'prog', 'work', 'prog.c', 'work', 9);
INSERT INTO run_functions (run_id, function_id, module_idx, calls, total, self) VALUES (1, 1, 0, 1, 9000, 1000);
INSERT INTO run_functions (run_id, function_id, module_idx, calls, total, self) VALUES (1, 2, 0, 11, 8000, 8000);
INSERT INTO run_edges (run_id, caller_id, callee_id, calls) VALUES (1, 1, 2, 11);
