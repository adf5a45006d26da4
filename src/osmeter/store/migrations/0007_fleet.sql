-- 0007_fleet: where a run ran and which fleet run it belongs to
-- (`osmeter fleet run`, issue 15). host is the host's inventory name;
-- fleet is the fleet run's id. NULL for runs made on this machine.
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN fleet TEXT;
CREATE INDEX runs_fleet ON runs (fleet);
