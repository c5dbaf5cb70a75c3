// The development CRDs in deploy/crds/dev are generated; a stale one would let tests pass against a different API.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { REGISTRY_POLICY_KINDS } from '../registry-policy.js';
import { devCrdFiles } from './dev-crds.js';
import { generatedFiles } from './generated-files.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface StandInCrd {
  metadata: { name: string };
  spec: {
    scope: string;
    versions: { name: string; schema: { openAPIV3Schema: { properties: Record<string, unknown> } } }[];
  };
}

describe('development CRDs of the registry-policy kinds', () => {
  it.each(devCrdFiles().map((f) => [f.path, f] as const))(
    '%s is up to date (run npm run generate)',
    (file, f) => {
      expect(readFileSync(path.join(root, file), 'utf8')).toBe(f.content);
    },
  );

  it('serves each kind at the version and scope the registry policy reads, keeping spec and status as written', () => {
    const crds = devCrdFiles().map((f) => parse(f.content) as StandInCrd);
    for (const crd of crds) {
      const type = REGISTRY_POLICY_KINDS.find((t) => `${t.plural}.${t.group}` === crd.metadata.name);
      expect(type, crd.metadata.name).toBeDefined();
      expect(crd.spec.scope).toBe(type?.namespaced ? 'Namespaced' : 'Cluster');
      expect(crd.spec.versions.map((v) => v.name)).toEqual([type?.version]);
      const fields = crd.spec.versions[0]?.schema.openAPIV3Schema.properties;
      expect(fields?.['spec']).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
      expect(fields?.['status']).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    }
  });

  it('are listed among the files pod placement generates, each path once', () => {
    const paths = generatedFiles().map((f) => f.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const f of devCrdFiles()) expect(paths).toContain(f.path);
  });
});
