-- 0002_lebench_names: osmeter 0.2 gave task.fork, task.thread_create and
-- mem.mmap LEBench's meaning (issue 9). Results of 0.1.0 probes keep their
-- meaning under the names and parameters that now stand for it
-- (src/osmeter/legacy.py does the same to imported files). Parameters stay
-- canonical JSON: sorted keys, no spaces; "group" and "prot" sort before
-- "size", the only parameter these benchmarks had.

UPDATE results SET bench = 'task.fork_exit'
 WHERE bench = 'task.fork' AND run_id IN (SELECT id FROM runs WHERE probe_version = '0.1.0');

UPDATE results SET bench = 'task.thread_join'
 WHERE bench = 'task.thread_create' AND run_id IN (SELECT id FROM runs WHERE probe_version = '0.1.0');

UPDATE results SET params = '{"group":8,"prot":"read_write",' || substr(params, 2)
 WHERE bench = 'mem.mmap' AND params LIKE '{"size":%'
   AND run_id IN (SELECT id FROM runs WHERE probe_version = '0.1.0');

UPDATE results SET params = '{"group":8,' || substr(params, 2)
 WHERE bench IN ('mem.munmap', 'mem.page_fault') AND params LIKE '{"size":%'
   AND run_id IN (SELECT id FROM runs WHERE probe_version = '0.1.0');
