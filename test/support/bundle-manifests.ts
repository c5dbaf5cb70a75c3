// The operator bundle's manifests (bundle/manifests/*.yaml, written by `npm run generate`), parsed, for the tests
// that install it as OLM would.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { projectRoot } from '../../src/devcluster/binaries.js';

export interface BundleManifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

/** Every document of every bundle manifest, in file-name order. */
export function bundleManifests(): BundleManifest[] {
  const dir = path.join(projectRoot, 'bundle/manifests');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJSON() as BundleManifest),
    );
}

/** The bundle's ClusterServiceVersion. */
export function bundleCsv(manifests: BundleManifest[]): BundleManifest {
  const csv = manifests.find((m) => m.kind === 'ClusterServiceVersion');
  if (!csv) throw new Error('bundle/manifests has no ClusterServiceVersion: run `npm run generate`');
  return csv;
}
