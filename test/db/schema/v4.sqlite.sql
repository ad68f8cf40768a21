-- The runs database as schema version 4 left it (db/db_schema.c, to_v1 to to_v4), with
-- one run and one campaign of one part in it: frozen. test/db/db_test.py loads this into an
-- empty SQLite database and opens it with the current ptcall, which must migrate it to
-- the current version and keep the run. Never edit this file; a new schema version adds
-- v5.*.sql beside it.
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT NOT NULL UNIQUE, trace TEXT NOT NULL, trace_bytes BIGINT NOT NULL, program TEXT NOT NULL, program_path TEXT, command TEXT, host TEXT NOT NULL, added_ns BIGINT NOT NULL, start_ns BIGINT, duration_ns BIGINT, exit_status INTEGER, signal INTEGER, core_dumped INTEGER, backend TEXT NOT NULL, time_unit TEXT NOT NULL, events BIGINT NOT NULL, whole_calls BIGINT NOT NULL, calls BIGINT NOT NULL, threads BIGINT NOT NULL, processes BIGINT NOT NULL, gaps BIGINT NOT NULL, missing_chunks BIGINT NOT NULL, lost_events BIGINT NOT NULL, lost_pt_units BIGINT NOT NULL, repairs BIGINT NOT NULL, unwound BIGINT NOT NULL, unmatched BIGINT NOT NULL, broken_frames BIGINT NOT NULL, open_at_end BIGINT NOT NULL, bad_stubs BIGINT NOT NULL, fork_unknown BIGINT NOT NULL, lossy_threads BIGINT NOT NULL, unfinished_processes BIGINT NOT NULL, complete INTEGER NOT NULL, lossy INTEGER NOT NULL, total_time BIGINT, selection TEXT, traced_functions BIGINT, functions BIGINT NOT NULL, edges BIGINT NOT NULL);
CREATE INDEX runs_start ON runs (start_ns);
CREATE TABLE run_tags (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (run_id, name));
CREATE INDEX run_tags_name_value ON run_tags (name, value);
CREATE TABLE run_modules (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, idx INTEGER NOT NULL, path TEXT NOT NULL, identity TEXT NOT NULL, functions INTEGER NOT NULL, build_id TEXT, PRIMARY KEY (run_id, idx));
CREATE TABLE functions (id INTEGER PRIMARY KEY AUTOINCREMENT, module TEXT NOT NULL, linkage_name TEXT NOT NULL, file TEXT NOT NULL, name TEXT NOT NULL, line INTEGER NOT NULL, UNIQUE (module, linkage_name, file));
CREATE TABLE run_functions (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, function_id BIGINT NOT NULL REFERENCES functions (id), module_idx INTEGER NOT NULL, calls BIGINT NOT NULL, total BIGINT, self BIGINT, PRIMARY KEY (run_id, function_id));
CREATE INDEX run_functions_figures ON run_functions (function_id, run_id, calls, total, self);
CREATE TABLE run_edges (run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE, caller_id BIGINT NOT NULL REFERENCES functions (id), callee_id BIGINT NOT NULL REFERENCES functions (id), calls BIGINT NOT NULL, PRIMARY KEY (run_id, caller_id, callee_id));
CREATE TABLE function_stats (function_id BIGINT NOT NULL REFERENCES functions (id), time_unit TEXT NOT NULL, runs BIGINT NOT NULL, calls_sum BIGINT NOT NULL, total_sum BIGINT NOT NULL, self_sum BIGINT NOT NULL, calls_max BIGINT NOT NULL, total_max BIGINT NOT NULL, self_max BIGINT NOT NULL, calls_min BIGINT NOT NULL DEFAULT 0, total_min BIGINT NOT NULL DEFAULT 0, self_min BIGINT NOT NULL DEFAULT 0, calls_sq DOUBLE PRECISION NOT NULL DEFAULT 0, total_sq DOUBLE PRECISION NOT NULL DEFAULT 0, self_sq DOUBLE PRECISION NOT NULL DEFAULT 0, PRIMARY KEY (function_id, time_unit));
CREATE TABLE edge_stats (caller_id BIGINT NOT NULL REFERENCES functions (id), callee_id BIGINT NOT NULL REFERENCES functions (id), runs BIGINT NOT NULL, calls_sum BIGINT NOT NULL, PRIMARY KEY (caller_id, callee_id));
CREATE INDEX edge_stats_callee ON edge_stats (callee_id);
CREATE TABLE campaigns (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, program TEXT NOT NULL, build_id TEXT NOT NULL, functions_total BIGINT NOT NULL, blocks_total BIGINT, added_ns BIGINT NOT NULL, parts BIGINT NOT NULL, instances BIGINT NOT NULL, inputs BIGINT NOT NULL, crashes BIGINT NOT NULL, hangs BIGINT NOT NULL, functions_reached BIGINT NOT NULL, blocks_reached BIGINT, campaign_ms BIGINT, last_new_ms BIGINT);
CREATE TABLE campaign_tags (campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (campaign_id, name));
CREATE INDEX campaign_tags_name_value ON campaign_tags (name, value);
CREATE TABLE campaign_parts (id INTEGER PRIMARY KEY AUTOINCREMENT, campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, content_hash TEXT NOT NULL UNIQUE, file TEXT NOT NULL, host TEXT NOT NULL, added_ns BIGINT NOT NULL, instances BIGINT NOT NULL, inputs BIGINT NOT NULL, crashes BIGINT NOT NULL, hangs BIGINT NOT NULL, functions_reached BIGINT NOT NULL, blocks_reached BIGINT, campaign_ms BIGINT, last_new_ms BIGINT);
CREATE INDEX campaign_parts_campaign ON campaign_parts (campaign_id);
CREATE TABLE campaign_instances (part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, idx INTEGER NOT NULL, name TEXT NOT NULL, host TEXT NOT NULL, inputs BIGINT NOT NULL, crashes BIGINT NOT NULL, hangs BIGINT NOT NULL, functions_reached BIGINT NOT NULL, blocks_reached BIGINT, last_new_ms BIGINT, PRIMARY KEY (part_id, idx));
CREATE TABLE campaign_points (part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, instance_idx INTEGER NOT NULL, t_ms BIGINT NOT NULL, functions BIGINT NOT NULL, blocks BIGINT, PRIMARY KEY (part_id, instance_idx, t_ms));
CREATE TABLE campaign_firsts (campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, function_id BIGINT NOT NULL REFERENCES functions (id), t_ms BIGINT NOT NULL, instance_idx INTEGER NOT NULL, input TEXT NOT NULL, PRIMARY KEY (part_id, function_id));
CREATE INDEX campaign_firsts_union ON campaign_firsts (campaign_id, function_id, t_ms);
CREATE TABLE campaign_block_firsts (campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, part_id BIGINT NOT NULL REFERENCES campaign_parts (id) ON DELETE CASCADE, block BIGINT NOT NULL, t_ms BIGINT NOT NULL, PRIMARY KEY (part_id, block));
CREATE INDEX campaign_block_firsts_union ON campaign_block_firsts (campaign_id, block, t_ms);
CREATE TABLE campaign_union (campaign_id BIGINT NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE, t_ms BIGINT NOT NULL, functions BIGINT NOT NULL, blocks BIGINT, PRIMARY KEY (campaign_id, t_ms));
INSERT INTO schema_version (version) VALUES (4);
INSERT INTO runs (id, content_hash, trace, trace_bytes, program, program_path, command, host, added_ns, start_ns, duration_ns, exit_status, signal, core_dumped, backend, time_unit, events, whole_calls, calls, threads, processes, gaps, missing_chunks, lost_events, lost_pt_units, repairs, unwound, unmatched, broken_frames, open_at_end, bad_stubs, fork_unknown, lossy_threads, unfinished_processes, complete, lossy, total_time, selection, traced_functions, functions, edges) VALUES (1, 'cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd', '/traces/v2.ptc', 4096, 'prog', '/bin/prog', './prog 7', 'v2host', 1700000000000000000, 1699999999000000000, 2500000, 0, NULL, NULL, 'soft', 'ns', 24, 0, 12, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9000, NULL, NULL, 2, 1);
INSERT INTO run_tags (run_id, name, value) VALUES (1, 'made', 'v4 fixture');
INSERT INTO run_modules (run_id, idx, path, identity, functions, build_id) VALUES (1, 0, '/bin/prog', '00000000000000ff', 2, '3f1c2a9be0d4a8c7e5f6071829304a5b6c7d8e9f');
INSERT INTO functions (id, module, linkage_name, file, name, line) VALUES (1, 'prog', 'main', 'prog.c', 'main', 3);
INSERT INTO functions (id, module, linkage_name, file, name, line) VALUES (2, 'prog', 'work', 'prog.c', 'work', 9);
INSERT INTO run_functions (run_id, function_id, module_idx, calls, total, self) VALUES (1, 1, 0, 1, 9000, 1000);
INSERT INTO run_functions (run_id, function_id, module_idx, calls, total, self) VALUES (1, 2, 0, 11, 8000, 8000);
INSERT INTO run_edges (run_id, caller_id, callee_id, calls) VALUES (1, 1, 2, 11);
INSERT INTO function_stats (function_id, time_unit, runs, calls_sum, total_sum, self_sum, calls_max, total_max, self_max, calls_min, total_min, self_min, calls_sq, total_sq, self_sq) VALUES (1, 'ns', 1, 1, 9000, 1000, 1, 9000, 1000, 1, 9000, 1000, 1, 81000000, 1000000);
INSERT INTO function_stats (function_id, time_unit, runs, calls_sum, total_sum, self_sum, calls_max, total_max, self_max, calls_min, total_min, self_min, calls_sq, total_sq, self_sq) VALUES (2, 'ns', 1, 11, 8000, 8000, 11, 8000, 8000, 11, 8000, 8000, 121, 64000000, 64000000);
INSERT INTO edge_stats (caller_id, callee_id, runs, calls_sum) VALUES (1, 2, 1, 11);
INSERT INTO campaigns (id, name, program, build_id, functions_total, blocks_total, added_ns, parts, instances, inputs, crashes, hangs, functions_reached, blocks_reached, campaign_ms, last_new_ms) VALUES (1, 'v4 campaign', 'prog', '3f1c2a9be0d4a8c7e5f6071829304a5b6c7d8e9f', 2, 4, 1700000000000000000, 1, 1, 2, 0, 0, 2, 3, 900, 40);
INSERT INTO campaign_tags (campaign_id, name, value) VALUES (1, 'fuzzer', 'afl');
INSERT INTO campaign_parts (id, campaign_id, content_hash, file, host, added_ns, instances, inputs, crashes, hangs, functions_reached, blocks_reached, campaign_ms, last_new_ms) VALUES (1, 1, 'abababababababababababababababab', 'v4.ptcov', 'v4host', 1700000000000000000, 1, 2, 0, 0, 2, 3, 900, 40);
INSERT INTO campaign_instances (part_id, idx, name, host, inputs, crashes, hangs, functions_reached, blocks_reached, last_new_ms) VALUES (1, 0, 'default', 'v4host', 2, 0, 0, 2, 3, 40);
INSERT INTO campaign_points (part_id, instance_idx, t_ms, functions, blocks) VALUES (1, 0, 0, 1, 2);
INSERT INTO campaign_points (part_id, instance_idx, t_ms, functions, blocks) VALUES (1, 0, 40, 2, 3);
INSERT INTO campaign_points (part_id, instance_idx, t_ms, functions, blocks) VALUES (1, -1, 0, 1, 2);
INSERT INTO campaign_points (part_id, instance_idx, t_ms, functions, blocks) VALUES (1, -1, 40, 2, 3);
INSERT INTO campaign_firsts (campaign_id, part_id, function_id, t_ms, instance_idx, input) VALUES (1, 1, 1, 0, 0, 'default/queue/id:000000');
INSERT INTO campaign_firsts (campaign_id, part_id, function_id, t_ms, instance_idx, input) VALUES (1, 1, 2, 40, 0, 'default/queue/id:000001');
INSERT INTO campaign_block_firsts (campaign_id, part_id, block, t_ms) VALUES (1, 1, 0, 0);
INSERT INTO campaign_block_firsts (campaign_id, part_id, block, t_ms) VALUES (1, 1, 1, 0);
INSERT INTO campaign_block_firsts (campaign_id, part_id, block, t_ms) VALUES (1, 1, 3, 40);
INSERT INTO campaign_union (campaign_id, t_ms, functions, blocks) VALUES (1, 0, 1, 2);
INSERT INTO campaign_union (campaign_id, t_ms, functions, blocks) VALUES (1, 40, 2, 3);
