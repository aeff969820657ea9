import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';

/** Writes a stand-in's state file atomically and durably (temp file, fsync, rename): a kill -9 leaves the old or the new. */
export function writeJsonDurably(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  const fd = openSync(tmp, 'w');
  writeSync(fd, JSON.stringify(value));
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, file);
}
