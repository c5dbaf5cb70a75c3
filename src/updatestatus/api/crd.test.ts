// The CRD in deploy/crds is generated from schema.ts; a stale copy would install a different API than the code uses.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { UPDATE_STATUS_CRD_FILE, updateStatusCrd, updateStatusCrdYaml } from './crd.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

describe('UpdateStatus CRD', () => {
  it('is up to date in deploy/crds (run npm run generate)', () => {
    expect(readFileSync(path.join(root, UPDATE_STATUS_CRD_FILE), 'utf8')).toBe(updateStatusCrdYaml());
  });
  it('is a cluster-scoped v1alpha1 API with a status subresource and a structural schema', () => {
    const crd = updateStatusCrd();
    expect(crd.metadata.name).toBe('updatestatuses.update.openshift.io');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    const yaml = parse(updateStatusCrdYaml()) as {
      spec: { versions: { schema: { openAPIV3Schema: unknown } }[] };
    };
    // Every schema node has a type (structural), and no TypeBox-only keywords leak out.
    const untyped: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if (!('type' in n)) untyped.push(at);
      for (const [k, v] of Object.entries((n.properties as Record<string, unknown>) ?? {}))
        walk(v, `${at}.${k}`);
      if (n.items) walk(n.items, `${at}[]`);
    };
    walk(yaml.spec.versions[0]?.schema.openAPIV3Schema, '');
    expect(untyped).toEqual([]);
    expect(JSON.stringify(crd)).not.toMatch(/"(\$id|anyOf|Kind)"/);
  });
});
