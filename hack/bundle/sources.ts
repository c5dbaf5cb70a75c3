// Reads what the bundle is derived from: the kustomize base of deploy/podplacement (its `resources`, in order) and
// the package version. The CRDs come from the TypeBox schemas directly. Used by `npm run generate` and the bundle
// image build; everything else about the bundle is pure (./bundle.ts).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { podPlacementCrd } from '../../src/podplacement/api/crd.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG } from '../../src/podplacement/api/schema.js';
import { BundleSourceError, type BundleSources, type Manifest } from './bundle.js';

/** The kustomize base the bundle is derived from, relative to the project root. */
export const POD_PLACEMENT_BASE = 'deploy/podplacement/base';
/** The image the committed bundle names; a release build pins the pushed digest instead. */
export const RELEASE_IMAGE_REPOSITORY = 'quay.io/tessera/tessera';

async function readManifests(file: string): Promise<Manifest[]> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'));
  const objects: Manifest[] = [];
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0)
      throw new BundleSourceError(`${file}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    objects.push(value as Manifest);
  }
  return objects;
}

export async function readBundleSources(
  root: string,
  overrides: { version?: string; image?: string; replaces?: string; createdAt?: string } = {},
): Promise<BundleSources> {
  const base = path.join(root, POD_PLACEMENT_BASE);
  const [kustomization] = await readManifests(path.join(base, 'kustomization.yaml'));
  const resources = (kustomization as unknown as { resources?: string[] }).resources ?? [];
  const deployObjects = (await Promise.all(resources.map((r) => readManifests(path.join(base, r))))).flat();
  const pkg = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { version: string };
  const version = overrides.version ?? pkg.version;
  return {
    version,
    image: overrides.image ?? `${RELEASE_IMAGE_REPOSITORY}:v${version}`,
    replaces: overrides.replaces,
    createdAt: overrides.createdAt,
    deployObjects,
    crds: [podPlacementCrd(CLUSTER_POD_PLACEMENT_CONFIG), podPlacementCrd(POD_PLACEMENT_CONFIG)] as unknown as Manifest[],
  };
}
