// The reference fixtures the tests read, kept in this repository under test/fixtures/ (see its PROVENANCE.md):
// a clone alone runs every test, and nothing reads ../shared.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of test/fixtures. */
export const fixturesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** Absolute path of `relative` under test/fixtures (e.g. `oc-upgrade-status`, `specs/x.json`). */
export function fixturePath(relative: string): string {
  return path.join(fixturesDir, relative);
}
