import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { podPlacementCrd, crdFileName, renderCrdYaml } from './crd.js';
import { CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG } from './schema.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('CRD generation', () => {
  it.each([CLUSTER_POD_PLACEMENT_CONFIG, POD_PLACEMENT_CONFIG])(
    'deploy/crds is up to date for $kind',
    (kind) => {
      const file = path.join(root, 'deploy', 'crds', crdFileName(kind));
      expect(readFileSync(file, 'utf8'), 'run: npm run generate').toBe(renderCrdYaml(kind));
    },
  );

  it('stores v1beta1 and serves v1alpha1 for the cluster config', () => {
    const crd = parse(renderCrdYaml(CLUSTER_POD_PLACEMENT_CONFIG)) as {
      spec: { versions: { name: string; served: boolean; storage: boolean }[]; scope: string };
    };
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1beta1', true, true],
    ]);
  });

  it('the PodPlacementConfig requires a spec with plugins', () => {
    const crd = podPlacementCrd(POD_PLACEMENT_CONFIG) as {
      spec: { versions: { schema: { openAPIV3Schema: { required: string[] } } }[] };
    };
    expect(crd.spec.versions[0]?.schema.openAPIV3Schema.required).toEqual(['spec']);
  });
});
