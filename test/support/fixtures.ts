// Locates the shared reference fixtures (../shared/fixtures, never copied into the repo).
// In CI a missing folder is a failure, not a skip: a green run must never hide untested behaviour.
// Outside CI a test may skip, and the skip message names the folder to fetch.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Absolute path of the shared folder (`$TESSERA_SHARED_DIR`, default `<project>/../shared`). */
export const sharedDir = path.resolve(
  process.env.TESSERA_SHARED_DIR ?? path.join(projectRoot, '..', 'shared'),
);

export interface SharedPath {
  /** The absolute path, present on disk. Undefined only outside CI when the folder is missing. */
  readonly path: string | undefined;
  /** Why `path` is undefined, for `describe.skipIf(...)` messages. */
  readonly skipReason: string | undefined;
}

/**
 * Resolves `relative` under the shared folder. Throws when it is missing and `CI` is set, so the test run fails
 * loudly; otherwise returns `{ path: undefined, skipReason }`.
 */
export function sharedPath(relative: string): SharedPath {
  const full = path.join(sharedDir, relative);
  if (existsSync(full)) return { path: full, skipReason: undefined };
  const reason = `shared fixtures not found at ${full}: check out the shared folder next to the project (or set TESSERA_SHARED_DIR)`;
  if (process.env.CI) throw new Error(`${reason}. CI requires it.`);
  return { path: undefined, skipReason: reason };
}
